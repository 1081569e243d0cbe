#!/usr/bin/env python3
"""Writes src/screening/data/common-names.txt: name parts (given or family) common enough in
the population that a full name made only of them says little about who someone is.

Sources:
- US Census Bureau, 1990 census name files (dist.all.last, dist.male.first, dist.female.first;
  public domain, a work of the U.S. Government), as shipped in the PyPI package `names` 0.3.0
  (`pip download names==0.3.0 --no-deps`, unpack, pass its `names/` directory as --census):
  every surname and given name with a frequency of at least 0.005 % (2,753 surnames, 2,501
  given names).
- INTERNATIONAL below: very common given names and surnames of naming cultures the US census
  under-represents (Arabic, Persian, Turkish, Russian and other Slavic, Chinese, Korean,
  Vietnamese, South Asian, West African, Spanish and Portuguese, German, French, Italian),
  written out by hand from the well-known most-common-name tables of those countries.

Tokens are lower-case ASCII as Vigil's normaliser writes them; Vigil normalises the file again
when it loads it. Usage: scripts/gen_common_names.py --census DIR [--out PATH]
"""
import argparse, os

MIN_FREQUENCY = 0.005  # per cent of the population

INTERNATIONAL = """
mohammed mohammad muhammad mohamed mohamad ahmed ahmad ali hassan hasan hussein husain hussain
omar umar abdullah abdallah ibrahim ismail youssef yusuf yousef khalid khaled mahmoud mahmud
mustafa mostafa ahmet mehmet said saeed salem salim saleh salah karim kareem rashid hamid hamed
jamal nasser nasir tariq tarek walid waleed adel adil amir ameer samir sami fatima fatma aisha
ayesha maryam mariam zainab khadija amina nour noor layla leila huda sara sarah yasmin reza
hossein mehdi ali-reza abbas akbar javad hamza bilal imran usman osman zaid zayd faisal
abdul abdel rahman rahim aziz malik khan shah ahmadi hosseini mohammadi rezaei karimi hashemi
al el bin ibn abu yilmaz kaya demir sahin celik yildiz yildirim ozturk aydin ozdemir arslan
dogan kilic aslan cetin kara koc kurt ozkan simsek
aleksandr alexander alexandr sergei sergey andrei andrey dmitry dmitri dmitriy vladimir alexei
aleksei alexey ivan nikolai nikolay mikhail yuri yury oleg igor pavel viktor victor evgeny
yevgeny anatoly boris maxim maksim roman denis artem anton konstantin olga elena yelena tatiana
tatyana natalia natalya irina svetlana maria mariya anna ekaterina yekaterina marina lyudmila
galina ivanov ivanova petrov petrova smirnov smirnova kuznetsov kuznetsova popov popova
sokolov sokolova lebedev kozlov novikov morozov volkov volkova solovyov vasiliev vasilyev
zaitsev pavlov semenov golubev vinogradov bogdanov vorobyov fedorov fyodorov mikhailov
belyaev tarasov belov orlov kiselev makarov andreev kovalev ilyin gusev titov kuzmin kudryavtsev
baranov kulikov alekseev stepanov yakovlev sorokin sergeev romanov zakharov borisov korolev
gerasimov ponomarev grigoriev lazarev medvedev ershov nikitin sobolev ryabov polyakov tsvetkov
danilov zhukov frolov zhuravlev nikolaev krylov maksimov sidorov osipov belousov fedotov
dorofeev egorov matveev bobrov dmitriev kalinin anisimov petukhov antonov timofeev nikiforov
veselov filippov markov bolshakov sukhanov mironov shiryaev aleksandrov konovalov shestakov
kazakov efimov denisov gromov fomin davydov melnikov shcherbakov blinov kolesnikov karpov
afanasiev vlasov maslov isakov tikhonov aksenov gavrilov rodionov kotov gorbunov kudryashov
bykov zuev tretyakov savelyev panov rybakov suvorov abramov voronov mukhin arkhipov trofimov
martynov emelyanov gorshkov chernov ovchinnikov seleznev panfilov kopylov mikheev galkin
nazarov lobanov lukin belyakov potapov nekrasov khokhlov zhdanov naumov shilov vorontsov
ermakov drozdov ignatiev savin loginov safonov kapustin kirillov moiseev eliseev koshelev
kostin gorbachev orekhov efremov isaev evdokimov kalashnikov kabanov noskov yudin kulagin
lapin prokhorov nesterov kharitonov agafonov muravyov laptev filatov
kowalski nowak wisniewski wojcik kowalczyk kaminski lewandowski zielinski szymanski
kovalenko bondarenko tkachenko shevchenko kravchenko boyko melnyk koval oliynyk
wang li zhang liu chen yang huang zhao wu zhou xu sun ma zhu hu guo he gao lin luo zheng liang
xie song tang han feng deng cao peng zeng xiao tian dong pan yuan cai jiang yu du ye cheng wei
su lu ding ren shen yao jiang cui zhong tan lu fan jin shi jia xia fu fang zou xiong bai meng
qin qiu hou jiang yin xue yan duan lei long li wei wei fang min jun jie jing ying hui hong
ming lei hua yan ping jian hao yong qiang xiaoming xiaoyan lihua
kim lee park choi jung jeong kang cho jo yoon yun jang lim im han oh seo shin kwon hwang ahn song
yoo hong jeon ko moon yang son bae baek heo nam sim noh ha kwak sung cha joo woo koo min ryu
nguyen tran le pham hoang huynh phan vu vo dang bui do ho ngo duong ly thi van minh anh thanh
duc quang tuan hung linh huong lan mai
patel shah singh kumar sharma gupta verma yadav reddy rao nair iyer das mehta jain joshi
mishra pandey agarwal chopra kapoor malhotra bhat desai kaur devi khan ahmed chaudhry
chowdhury begum akter hossain islam rahman uddin
raj rajesh ramesh suresh mahesh ganesh dinesh rakesh mukesh amit anil sunil vijay sanjay
ajay ravi arun ashok deepak manoj rahul rohit sachin vikram anita sunita priya pooja neha
lakshmi geeta kavita rekha asha usha meena
adebayo adeyemi okafor okonkwo eze obi nwosu chukwu mohammed bello abubakar ibrahim musa
yusuf usman aliyu sani garba abdullahi suleiman ogunleye oladipo olawale babatunde emeka
chinedu ngozi chioma oluwaseun tunde funmilayo amaka ifeoma mensah owusu boateng asante
osei appiah agyeman kofi kwame kwabena ama akosua abena
garcia rodriguez martinez hernandez lopez gonzalez gonzales perez sanchez ramirez torres flores
rivera gomez diaz reyes morales cruz ortiz gutierrez chavez ramos ruiz alvarez mendoza
castillo jimenez moreno romero herrera medina aguilar vargas castro fernandez guzman munoz
mendez salazar garza soto vasquez vazquez silva santos oliveira souza sousa pereira costa
rodrigues almeida nascimento lima araujo carvalho ribeiro ferreira alves martins rocha
jose juan carlos luis jorge miguel pedro antonio francisco manuel javier alejandro fernando
ricardo eduardo roberto rafael sergio andres diego pablo daniel joao paulo marcos lucas
maria ana carmen rosa lucia laura isabel sofia elena patricia gabriela fernanda juliana
muller mueller schmidt schneider fischer weber meyer wagner becker schulz hoffmann schafer
koch bauer richter klein wolf schroder neumann schwarz zimmermann braun kruger hofmann
hartmann lange schmitt werner krause meier lehmann schmid schulze maier kohler herrmann
konig walter mayer huber kaiser fuchs peters lang scholz moller weiss jung hahn vogel
hans peter klaus jurgen wolfgang thomas michael andreas stefan frank uwe dieter gunter
martin bernard dubois durand lefebvre leroy moreau simon laurent michel girard roux vincent
fournier morel andre mercier dupont lambert bonnet francois legrand
jean pierre jacques philippe alain nicolas christophe marie nathalie isabelle sylvie
rossi russo ferrari esposito bianchi romano colombo ricci marino greco bruno gallo conti
de luca giordano mancini rizzo lombardi moretti giuseppe giovanni marco luca francesco
alessandro andrea matteo paolo giorgio
hamad hamed mansour mansur firas reem rim haddad khoury nasr saad sultan suleiman soliman
younes younis yunus anwar ashraf ayman bassam fadi fares faris ghassan habib hadi hani hisham
imad issa jamil kamal khalil maher majid marwan mazen nabil nader osama usama rami riad sabri
samer tamer wael yasser ziad zaki hijazi masri shami halabi hamdan hamdi darwish khalaf najjar
nassar qasim kassem sharif shaikh sheikh zaidi rashed obeid abdelaziz abdulaziz abdulrahman
abdelrahman abdulla zahra fatemeh mohsen behrouz farhad mousavi musavi jafari ghasemi sadeghi
kazemi moradi rahimi nazari ebrahimi amini noori nouri
qing wei fang na min jing qiang jun yong yan jie tao chao xiu xia ping gang bo ling dan xin bin
hai peng kai rui ting yi mei juan lan zhen shuang yun guo xiang hai yan
""".split()

# Russian and other East Slavic family names have a feminine form in -a.
SLAVIC_FEMININE = ("ov", "ev", "yov", "in")


def census(path):
    out = set()
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and float(parts[1]) >= MIN_FREQUENCY:
                out.add(parts[0].lower())
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--census", required=True, help="directory with the census dist.* files")
    ap.add_argument("--out", default="src/screening/data/common-names.txt")
    args = ap.parse_args()
    names = set()
    for file in ("dist.all.last", "dist.male.first", "dist.female.first"):
        names |= census(os.path.join(args.census, file))
    names |= set(INTERNATIONAL)
    names |= {n + "a" for n in INTERNATIONAL if n.endswith(SLAVIC_FEMININE) and len(n) > 4}
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write("# Common name parts (scripts/gen_common_names.py writes this file; sources there).\n")
        for name in sorted(names):
            f.write(name + "\n")
    print(f"wrote {len(names)} name parts to {args.out}")


if __name__ == "__main__":
    main()
