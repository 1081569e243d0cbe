//! goAML 5.0.1 code lists used by the report builder, generated from `goAMLSchema.xsd`
//! (`../shared/data/goaml/`, the UNODC schema): a value outside them fails schema validation, so
//! records are checked against them before a report is built.

pub const REPORT_CODES: &[&str] = &[
    "-", "AIF", "CTR", "ECTR", "ICR", "IRD", "IRF", "M", "PEP", "SAR", "STR", "STRM", "TFR",
];

pub const FUNDS_CODES: &[&str] = &[
    "-", "A", "B", "BB", "C", "CC", "D", "E", "EE", "F", "FF", "G", "H", "HH", "I", "J", "JJ", "K",
    "KK", "L", "LL", "M", "N", "NN", "O", "P", "QQ", "RR",
];

pub const TRANSMODE_CODES: &[&str] = &[
    "-", "A", "AA", "AB", "AC", "AD", "AE", "AF", "AG", "AH", "AJ", "AK", "AL", "AM", "AN", "AO",
    "AP", "AQ", "AR", "AS", "AT", "AU", "B", "C", "D", "E", "F",
];

pub const CURRENCY_CODES: &[&str] = &[
    "-", "ADF", "ADP", "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "AOK", "AON", "ARA", "ARS", "ATS",
    "AUD", "AWG", "AZN", "BAM", "BBD", "BDT", "BEC", "BEF", "BEL", "BGL", "BGN", "BHD", "BIF",
    "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BUK", "BWP", "BYR", "BZD", "CAD", "CDF", "CDZ",
    "CHE", "CHF", "CHW", "CLF", "CLP", "CNY", "COP", "COU", "CRC", "CSK", "CUP", "CVE", "CYP",
    "CZK", "DDM", "DEM", "DJF", "DKK", "DOP", "DZD", "ECS", "ECV", "EEK", "EGP", "ERN", "ESA",
    "ESB", "ESP", "ETB", "EUR", "FIM", "FJD", "FKP", "FRF", "GBP", "GEL", "GHC", "GHS", "GIP",
    "GMD", "GNF", "GNS", "GQE", "GRD", "GTQ", "GWP", "GYD", "HKD", "HNL", "HRK", "HTG", "HUF",
    "IDR", "IEP", "ILP", "ILR", "ILS", "INR", "IQD", "IRR", "ISJ", "ISK", "ITL", "JMD", "JOD",
    "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAJ", "LAK", "LBP",
    "LKR", "LRD", "LSL", "LSM", "LTL", "LUF", "LVL", "LYD", "MAD", "MAF", "MCF", "MDL", "MGA",
    "MKD", "MKN", "MLF", "MMK", "MNT", "MOP", "MRO", "MTL", "MTP", "MUR", "MVQ", "MVR", "MWK",
    "MXN", "MYR", "MZM", "MZN", "NAD", "NFD", "NGN", "NIO", "NLG", "NOK", "NPR", "NZD", "OMR",
    "PAB", "PEH", "PEI", "PEN", "PES", "PGK", "PHP", "PKR", "PLN", "PLZ", "PTE", "PYG", "QAR",
    "ROL", "RON", "RSD", "RUB", "RUR", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP",
    "SIT", "SKK", "SLL", "SML", "SOS", "SRD", "SSP", "STD", "STN", "SUR", "SVC", "SYP", "SZL",
    "THB", "TJR", "TJS", "TMM", "TMT", "TND", "TOP", "TPE", "TRL", "TRY", "TTD", "TWD", "TZS",
    "UAH", "UAK", "UGS", "UGX", "UKP", "USD", "USN", "USS", "UYN", "UYP", "UYU", "UZS", "VAL",
    "VEB", "VEF", "VND", "VUV", "WST", "XAF", "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XCD",
    "XDR", "XEU", "XFO", "XFU", "XOF", "XPD", "XPF", "XPT", "XTS", "XXX", "YDD", "YER", "YUD",
    "YUG", "YUM", "YUN", "YUO", "YUR", "ZAL", "ZAR", "ZMK", "ZMW", "ZRN", "ZRZ", "ZWC", "ZWD",
    "ZWN",
];

pub const COUNTRY_CODES: &[&str] = &[
    "-", "AC", "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AN", "AO", "AP", "AQ", "AR", "AS", "AT",
    "AU", "AW", "AX", "AZ", "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN",
    "BO", "BQ", "BR", "BS", "BT", "BU", "BV", "BW", "BX", "BY", "BZ", "CA", "CC", "CD", "CF", "CG",
    "CH", "CI", "CK", "CL", "CM", "CN", "CO", "CP", "CR", "CS", "CU", "CV", "CW", "CX", "CY", "CZ",
    "DE", "DG", "DJ", "DK", "DM", "DO", "DZ", "EA", "EC", "EE", "EF", "EG", "EH", "EM", "EP", "ER",
    "ES", "ET", "EU", "EV", "FI", "FJ", "FK", "FM", "FO", "FR", "FX", "GA", "GB", "GC", "GD", "GE",
    "GF", "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK",
    "HM", "HN", "HR", "HT", "HU", "IB", "IC", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS",
    "IT", "JE", "JM", "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KS", "KW", "KY",
    "KZ", "LA", "LB", "LC", "LF", "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD",
    "ME", "MF", "MG", "MH", "MK", "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV",
    "MW", "MX", "MY", "MZ", "NA", "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NT", "NU",
    "NZ", "OA", "OM", "PA", "PE", "PF", "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW",
    "PY", "QA", "RB", "RE", "RO", "RS", "RU", "RW", "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI",
    "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS", "ST", "SU", "SV", "SX", "SY", "SZ", "TA", "TC",
    "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO", "TP", "TR", "TT", "TV", "TW", "TZ",
    "UA", "UG", "UM", "UN", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI", "VN", "VU", "WF", "WO",
    "WS", "WV", "XK", "YE", "YT", "YU", "ZA", "ZM", "ZR", "ZW",
];
