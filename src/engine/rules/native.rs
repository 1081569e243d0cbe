//! Native rule conditions: a rule's compiled Rhai AST translated into Rust closures over the typed
//! [`RuleInput`], so the common rules skip Rhai's dynamic dispatch entirely.
//!
//! The translation covers a subset: literals and pack constants, `let` bindings, property reads
//! and the `agg` helper methods on the views, `+ - * / %`, comparisons, unary `-` and `!`, `&&`,
//! `||`, `if … else …` expressions and `in_set`. Every expression gets a static type (bool, INT,
//! FLOAT, string) from the property table it reads, so each operator is chosen once at load time.
//! A rule that uses anything else — loops, indexing, script functions, a type mix that only Rhai
//! resolves at run time — keeps running in the interpreter ([`Unsupported`] says why).
//!
//! The closures reproduce Rhai's semantics exactly: INT arithmetic is checked (overflow and
//! division by zero are errors), INT/FLOAT mixes widen to FLOAT, FLOAT comparisons use Rhai's
//! relative-epsilon rule, `&&`/`||` short-circuit, `let` bindings are evaluated eagerly in order,
//! and strings longer than the sandbox's string limit are errors. Where Rhai would raise an error
//! the closure returns [`Fault`] and the caller re-runs the rule in the interpreter, which produces
//! the error with its exact message and position. A rule is only translated when its worst-case
//! operation count stays far below the sandbox's operation limit, so the limits hold unchanged.
//! Differential tests (`tests` below and `tests/it/native_rules.rs`) compare both paths over every
//! fixture, the default pack and random inputs and expressions.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rhai::{Dynamic, Expr, ImmutableString, Stmt, StmtBlock, Token, AST, FLOAT, INT};

use super::context::{self, Getter, RuleInput, View};

/// Rhai would raise an error here; re-run the rule in the interpreter for the exact error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault;

type R<T> = Result<T, Fault>;

/// Why a rule is not translated and stays with the interpreter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported(pub String);

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn unsupported<T>(why: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported(why.into()))
}

/// `let` bindings live in fixed slots, stored as raw bits of their static type.
const MAX_LOCALS: usize = 16;
type Locals = [u64; MAX_LOCALS];

type BoolFn = Box<dyn Fn(&RuleInput, &Locals) -> R<bool> + Send + Sync>;
type IntFn = Box<dyn Fn(&RuleInput, &Locals) -> R<INT> + Send + Sync>;
type FloatFn = Box<dyn Fn(&RuleInput, &Locals) -> R<FLOAT> + Send + Sync>;

/// A string operand: a constant or a property of the input.
enum StrExpr {
    Const(ImmutableString),
    Prop(for<'a> fn(&'a RuleInput) -> &'a str),
    Shared(for<'a> fn(&'a RuleInput) -> &'a ImmutableString),
}

impl StrExpr {
    /// Property strings are checked against the sandbox's string limit, as Rhai checks every
    /// value a native function returns.
    fn get<'a>(&'a self, input: &'a RuleInput, max_len: usize) -> R<&'a str> {
        let value = match self {
            StrExpr::Const(s) => return Ok(s.as_str()),
            StrExpr::Prop(get) => get(input),
            StrExpr::Shared(get) => get(input).as_str(),
        };
        if max_len > 0 && value.len() > max_len {
            return Err(Fault);
        }
        Ok(value)
    }
}

/// A translated expression with its static type.
enum Value {
    Bool(BoolFn),
    Int(IntFn),
    Float(FloatFn),
    Str(StrExpr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Bool,
    Int,
    Float,
    Str,
}

impl Value {
    fn ty(&self) -> Ty {
        match self {
            Value::Bool(_) => Ty::Bool,
            Value::Int(_) => Ty::Int,
            Value::Float(_) => Ty::Float,
            Value::Str(_) => Ty::Str,
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "bool",
            Value::Int(_) => "INT",
            Value::Float(_) => "FLOAT",
            Value::Str(_) => "string",
        }
    }

    /// INT widened to FLOAT, as Rhai does for mixed arithmetic and comparisons.
    fn into_float(self) -> Option<FloatFn> {
        match self {
            Value::Float(f) => Some(f),
            Value::Int(f) => Some(Box::new(move |i, l| Ok(f(i, l)? as FLOAT))),
            _ => None,
        }
    }
}

/// A value computed by native code, for tests comparing it with Rhai's.
#[derive(Debug, Clone, PartialEq)]
pub enum Computed {
    Bool(bool),
    Int(INT),
    Float(FLOAT),
    Str(String),
}

/// One binding: its slot and its expression.
struct Binding {
    slot: usize,
    value: Value,
}

/// A rule condition translated to native closures.
pub struct NativeRule {
    bindings: Vec<Binding>,
    condition: Value,
    max_string: usize,
}

impl std::fmt::Debug for NativeRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeRule")
            .field("bindings", &self.bindings.len())
            .field("condition", &self.condition.type_name())
            .finish()
    }
}

impl NativeRule {
    /// Evaluates the condition. `Err(Fault)` means Rhai would fail: run the interpreter.
    #[inline]
    pub fn evaluate(&self, input: &RuleInput) -> R<bool> {
        let locals = self.bind(input)?;
        match &self.condition {
            Value::Bool(f) => f(input, &locals),
            // Only translated when the condition is a bool.
            _ => Err(Fault),
        }
    }

    fn bind(&self, input: &RuleInput) -> R<Locals> {
        let mut locals = [0u64; MAX_LOCALS];
        for binding in &self.bindings {
            let bits = match &binding.value {
                Value::Bool(f) => u64::from(f(input, &locals)?),
                Value::Int(f) => f(input, &locals)? as u64,
                Value::Float(f) => f(input, &locals)?.to_bits(),
                Value::Str(_) => return Err(Fault),
            };
            locals[binding.slot] = bits;
        }
        Ok(locals)
    }

    /// The value of the final expression whatever its type (tests compare it with Rhai's).
    pub fn compute(&self, input: &RuleInput) -> R<Computed> {
        let locals = self.bind(input)?;
        Ok(match &self.condition {
            Value::Bool(f) => Computed::Bool(f(input, &locals)?),
            Value::Int(f) => Computed::Int(f(input, &locals)?),
            Value::Float(f) => Computed::Float(f(input, &locals)?),
            Value::Str(s) => Computed::Str(s.get(input, self.max_string)?.to_owned()),
        })
    }
}

/// What the translation needs besides the AST.
pub struct Context<'a> {
    /// Pack constants (`[params]`, upper-cased names).
    pub constants: &'a HashMap<String, Dynamic>,
    /// Named sets for `in_set` (members upper-cased).
    pub sets: &'a Arc<HashMap<String, HashSet<String>>>,
    /// The sandbox's operation limit (0 = unlimited).
    pub max_operations: u64,
    /// The sandbox's string limit (0 = unlimited).
    pub max_string_size: usize,
}

struct Local {
    name: ImmutableString,
    slot: usize,
    ty: Ty,
}

struct Translator<'a> {
    context: &'a Context<'a>,
    locals: Vec<Local>,
    /// AST nodes seen, for the operation bound.
    nodes: u64,
}

/// Translates a rule's AST, or says why it stays interpreted.
pub fn translate(ast: &AST, context: &Context<'_>) -> Result<NativeRule, Unsupported> {
    translate_any(ast, context, true)
}

/// As [`translate`], but the final expression may be of any type (for tests of values).
pub fn translate_expression(ast: &AST, context: &Context<'_>) -> Result<NativeRule, Unsupported> {
    translate_any(ast, context, false)
}

fn translate_any(
    ast: &AST,
    context: &Context<'_>,
    must_be_bool: bool,
) -> Result<NativeRule, Unsupported> {
    if ast.has_functions() {
        return unsupported("defines script functions");
    }
    let mut translator = Translator {
        context,
        locals: Vec::new(),
        nodes: 0,
    };
    let statements = ast.statements();
    let Some((last, bindings)) = statements.split_last() else {
        return unsupported("empty condition");
    };
    let mut compiled = Vec::with_capacity(bindings.len());
    for statement in bindings {
        translator.nodes += 1;
        let Stmt::Var(var, _, _) = statement else {
            return unsupported("a statement other than `let` before the condition");
        };
        let (ident, expr, _) = &**var;
        let value = translator.expr(expr)?;
        if value.ty() == Ty::Str {
            return unsupported("a string `let` binding");
        }
        let slot = translator.locals.len();
        if slot >= MAX_LOCALS {
            return unsupported("too many `let` bindings");
        }
        translator.locals.push(Local {
            name: ident.name.clone(),
            slot,
            ty: value.ty(),
        });
        compiled.push(Binding { slot, value });
    }
    let condition = translator.stmt(last)?;
    if must_be_bool && condition.ty() != Ty::Bool {
        return unsupported(format!(
            "the condition is {}, not bool",
            condition.type_name()
        ));
    }
    // Rhai counts about one operation per node evaluated (more for calls); stay far below.
    let bound = translator.nodes.saturating_mul(4).saturating_add(64);
    if context.max_operations > 0 && bound >= context.max_operations {
        return unsupported("too close to the sandbox's operation limit");
    }
    Ok(NativeRule {
        bindings: compiled,
        condition,
        max_string: context.max_string_size,
    })
}

/// Rhai's FLOAT comparisons (checked build): relative to the larger magnitude, within epsilon.
#[inline]
fn float_compare(op: Cmp, x: FLOAT, y: FLOAT) -> bool {
    let max = if x * y == 0.0 {
        1.0
    } else {
        x.abs().max(y.abs())
    };
    if max == 0.0 {
        return matches!(op, Cmp::Eq | Cmp::Ge | Cmp::Le);
    }
    match op {
        Cmp::Eq => (x - y).abs() / max <= FLOAT::EPSILON,
        Cmp::Ne => (x - y).abs() / max > FLOAT::EPSILON,
        Cmp::Gt => (x - y) / max > FLOAT::EPSILON,
        Cmp::Ge => (x - y) / max > -FLOAT::EPSILON,
        Cmp::Lt => (y - x) / max > FLOAT::EPSILON,
        Cmp::Le => (y - x) / max > -FLOAT::EPSILON,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Cmp {
    fn of(token: &Token) -> Option<Cmp> {
        Some(match token {
            Token::EqualsTo => Cmp::Eq,
            Token::NotEqualsTo => Cmp::Ne,
            Token::GreaterThan => Cmp::Gt,
            Token::GreaterThanEqualsTo => Cmp::Ge,
            Token::LessThan => Cmp::Lt,
            Token::LessThanEqualsTo => Cmp::Le,
            _ => return None,
        })
    }

    #[inline]
    fn apply<T: PartialOrd>(self, x: T, y: T) -> bool {
        match self {
            Cmp::Eq => x == y,
            Cmp::Ne => x != y,
            Cmp::Gt => x > y,
            Cmp::Ge => x >= y,
            Cmp::Lt => x < y,
            Cmp::Le => x <= y,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl Arith {
    fn of(token: &Token) -> Option<Arith> {
        Some(match token {
            Token::Plus => Arith::Add,
            Token::Minus => Arith::Sub,
            Token::Multiply => Arith::Mul,
            Token::Divide => Arith::Div,
            Token::Modulo => Arith::Rem,
            _ => return None,
        })
    }

    /// Rhai's checked INT arithmetic: overflow and division by zero are errors.
    #[inline]
    fn int(self, x: INT, y: INT) -> R<INT> {
        let result = match self {
            Arith::Add => x.checked_add(y),
            Arith::Sub => x.checked_sub(y),
            Arith::Mul => x.checked_mul(y),
            Arith::Div if y == 0 => None,
            Arith::Div => x.checked_div(y),
            Arith::Rem => x.checked_rem(y),
        };
        result.ok_or(Fault)
    }

    #[inline]
    fn float(self, x: FLOAT, y: FLOAT) -> FLOAT {
        match self {
            Arith::Add => x + y,
            Arith::Sub => x - y,
            Arith::Mul => x * y,
            Arith::Div => x / y,
            Arith::Rem => x % y,
        }
    }
}

fn constant(value: &Dynamic) -> Option<Value> {
    if let Ok(b) = value.as_bool() {
        return Some(Value::Bool(Box::new(move |_, _| Ok(b))));
    }
    if let Ok(n) = value.as_int() {
        return Some(Value::Int(Box::new(move |_, _| Ok(n))));
    }
    if let Ok(x) = value.as_float() {
        return Some(Value::Float(Box::new(move |_, _| Ok(x))));
    }
    if value.is_string() {
        let s = value.clone().into_immutable_string().ok()?;
        return Some(Value::Str(StrExpr::Const(s)));
    }
    None
}

impl Translator<'_> {
    /// A statement in value position (the condition, or the only statement of an `if` branch).
    fn stmt(&mut self, statement: &Stmt) -> Result<Value, Unsupported> {
        self.nodes += 1;
        match statement {
            Stmt::Expr(expr) => self.expr(expr),
            Stmt::FnCall(call, _) => self.call(call),
            Stmt::If(flow, _) => self.if_else(&flow.expr, &flow.body, &flow.branch),
            _ => unsupported("a statement that is not an expression"),
        }
    }

    fn block(&mut self, block: &StmtBlock) -> Result<Value, Unsupported> {
        match block.statements() {
            [only] => self.stmt(only),
            [] => unsupported("an empty block (its value is ())"),
            _ => unsupported("a block of several statements"),
        }
    }

    fn if_else(
        &mut self,
        condition: &Expr,
        then: &StmtBlock,
        otherwise: &StmtBlock,
    ) -> Result<Value, Unsupported> {
        let Value::Bool(condition) = self.expr(condition)? else {
            return unsupported("an `if` whose condition is not bool");
        };
        let then = self.block(then)?;
        let otherwise = self.block(otherwise)?;
        Ok(match (then, otherwise) {
            (Value::Bool(a), Value::Bool(b)) => {
                Value::Bool(Box::new(
                    move |i, l| {
                        if condition(i, l)? {
                            a(i, l)
                        } else {
                            b(i, l)
                        }
                    },
                ))
            }
            (Value::Int(a), Value::Int(b)) => {
                Value::Int(Box::new(
                    move |i, l| {
                        if condition(i, l)? {
                            a(i, l)
                        } else {
                            b(i, l)
                        }
                    },
                ))
            }
            (Value::Float(a), Value::Float(b)) => {
                Value::Float(Box::new(
                    move |i, l| {
                        if condition(i, l)? {
                            a(i, l)
                        } else {
                            b(i, l)
                        }
                    },
                ))
            }
            (a, b) => {
                return unsupported(format!(
                    "an `if` with {} and {} branches",
                    a.type_name(),
                    b.type_name()
                ))
            }
        })
    }

    fn expr(&mut self, expr: &Expr) -> Result<Value, Unsupported> {
        self.nodes += 1;
        match expr {
            Expr::BoolConstant(b, _) => {
                let b = *b;
                Ok(Value::Bool(Box::new(move |_, _| Ok(b))))
            }
            Expr::IntegerConstant(n, _) => {
                let n = *n;
                Ok(Value::Int(Box::new(move |_, _| Ok(n))))
            }
            Expr::FloatConstant(x, _) => {
                let x: FLOAT = **x;
                Ok(Value::Float(Box::new(move |_, _| Ok(x))))
            }
            Expr::StringConstant(s, _) => Ok(Value::Str(StrExpr::Const(s.clone()))),
            Expr::DynamicConstant(value, _) => match constant(value) {
                Some(value) => Ok(value),
                None => unsupported(format!("a constant of type {}", value.type_name())),
            },
            Expr::Variable(var, _, _) => {
                let (_, name, namespace, _) = &**var;
                if !namespace.is_empty() {
                    return unsupported("a namespaced variable");
                }
                self.variable(name)
            }
            Expr::Dot(dot, flags, _) => {
                if flags.contains(rhai::ASTFlags::NEGATED) {
                    return unsupported("`?.`");
                }
                let view = match &dot.lhs {
                    Expr::Variable(var, _, _) if var.2.is_empty() => self.view(&var.1)?,
                    _ => return unsupported("`.` on something other than a view"),
                };
                match &dot.rhs {
                    Expr::Property(property, _) => self.property(view, &property.2),
                    Expr::MethodCall(call, _) => self.method(view, call),
                    _ => unsupported("a chained `.`"),
                }
            }
            Expr::FnCall(call, _) => self.call(call),
            Expr::And(operands, _) => {
                let operands = self.bools(&operands[..], "&&")?;
                Ok(Value::Bool(Box::new(move |i, l| {
                    for operand in &operands {
                        if !operand(i, l)? {
                            return Ok(false);
                        }
                    }
                    Ok(true)
                })))
            }
            Expr::Or(operands, _) => {
                let operands = self.bools(&operands[..], "||")?;
                Ok(Value::Bool(Box::new(move |i, l| {
                    for operand in &operands {
                        if operand(i, l)? {
                            return Ok(true);
                        }
                    }
                    Ok(false)
                })))
            }
            Expr::Stmt(block) => self.block(block),
            _ => unsupported("an expression outside the native subset"),
        }
    }

    fn bools(&mut self, operands: &[Expr], op: &str) -> Result<Vec<BoolFn>, Unsupported> {
        operands
            .iter()
            .map(|operand| match self.expr(operand)? {
                Value::Bool(f) => Ok(f),
                other => unsupported(format!("`{op}` on {}", other.type_name())),
            })
            .collect()
    }

    fn variable(&mut self, name: &str) -> Result<Value, Unsupported> {
        if let Some(local) = self.locals.iter().rev().find(|l| l.name.as_str() == name) {
            let slot = local.slot;
            return Ok(match local.ty {
                Ty::Bool => Value::Bool(Box::new(move |_, l| Ok(l[slot] != 0))),
                Ty::Int => Value::Int(Box::new(move |_, l| Ok(l[slot] as INT))),
                Ty::Float => Value::Float(Box::new(move |_, l| Ok(FLOAT::from_bits(l[slot])))),
                Ty::Str => return unsupported("a string binding"),
            });
        }
        if View::named(name).is_some() {
            return unsupported(format!("the view `{name}` used as a value"));
        }
        match self.context.constants.get(name).and_then(constant) {
            Some(value) => Ok(value),
            None => unsupported(format!("the variable `{name}`")),
        }
    }

    /// The view a name refers to, unless a `let` binding shadows it.
    fn view(&self, name: &str) -> Result<View, Unsupported> {
        if self.locals.iter().any(|l| l.name.as_str() == name) {
            return unsupported(format!("`.` on the binding `{name}`"));
        }
        match View::named(name) {
            Some(view) => Ok(view),
            None => unsupported(format!("`.` on `{name}`")),
        }
    }

    fn property(&mut self, view: View, name: &str) -> Result<Value, Unsupported> {
        let Some(getter) = view.property(name) else {
            return unsupported(format!("unknown property `{name}`"));
        };
        Ok(match getter {
            Getter::Bool(get) => Value::Bool(Box::new(move |i, _| Ok(get(i)))),
            Getter::Int(get) => Value::Int(Box::new(move |i, _| Ok(get(i)))),
            Getter::Float(get) => Value::Float(Box::new(move |i, _| Ok(get(i)))),
            Getter::Str(get) => Value::Str(StrExpr::Prop(get)),
            Getter::Shared(get) => Value::Str(StrExpr::Shared(get)),
        })
    }

    fn method(&mut self, view: View, call: &rhai::FnCallExpr) -> Result<Value, Unsupported> {
        if view != View::Agg {
            return unsupported(format!("a method call on {view:?}"));
        }
        let mut args = Vec::with_capacity(call.args.len());
        for arg in call.args.iter() {
            args.push(self.expr(arg)?);
        }
        let name = call.name.as_str();
        let mut args = args.into_iter();
        match (name, args.next(), args.next(), args.next(), args.next()) {
            (
                "count_debits_between",
                Some(Value::Float(low)),
                Some(Value::Float(high)),
                Some(Value::Int(hours)),
                None,
            ) => Ok(Value::Int(Box::new(move |i, l| {
                let (low, high, hours) = (low(i, l)?, high(i, l)?, hours(i, l)?);
                Ok(context::count_debits_between(i, low, high, hours))
            }))),
            (
                "count_debits_between",
                Some(Value::Int(low)),
                Some(Value::Int(high)),
                Some(Value::Int(hours)),
                None,
            ) => Ok(Value::Int(Box::new(move |i, l| {
                let (low, high, hours) = (low(i, l)?, high(i, l)?, hours(i, l)?);
                Ok(context::count_debits_between(
                    i,
                    low as FLOAT,
                    high as FLOAT,
                    hours,
                ))
            }))),
            ("debits_today", Some(Value::Int(arg)), None, None, None) => {
                Ok(Value::Float(Box::new(move |i, l| {
                    Ok(context::debits_today(i, arg(i, l)?))
                })))
            }
            ("closest_credit_ratio_within", Some(Value::Int(arg)), None, None, None) => {
                Ok(Value::Float(Box::new(move |i, l| {
                    Ok(context::closest_credit_ratio(i, arg(i, l)?))
                })))
            }
            ("count_debits_within", Some(Value::Int(arg)), None, None, None) => {
                Ok(Value::Int(Box::new(move |i, l| {
                    Ok(context::count_debits_within(i, arg(i, l)?))
                })))
            }
            ("count_credits_within", Some(Value::Int(arg)), None, None, None) => {
                Ok(Value::Int(Box::new(move |i, l| {
                    Ok(context::count_credits_within(i, arg(i, l)?))
                })))
            }
            ("sum_debits_within", Some(Value::Int(arg)), None, None, None) => {
                Ok(Value::Float(Box::new(move |i, l| {
                    Ok(context::sum_debits_within(i, arg(i, l)?))
                })))
            }
            ("sum_credits_within", Some(Value::Int(arg)), None, None, None) => {
                Ok(Value::Float(Box::new(move |i, l| {
                    Ok(context::sum_credits_within(i, arg(i, l)?))
                })))
            }
            _ => unsupported(format!("the method `{name}` with these argument types")),
        }
    }

    fn call(&mut self, call: &rhai::FnCallExpr) -> Result<Value, Unsupported> {
        if !call.namespace.is_empty() {
            return unsupported("a namespaced function call");
        }
        if let Some(token) = call.op_token.as_ref() {
            return match call.args.as_slice() {
                [operand] => self.unary(token, operand),
                [lhs, rhs] => self.binary(token, lhs, rhs),
                _ => unsupported("an operator with more than two operands"),
            };
        }
        match (call.name.as_str(), call.args.as_slice()) {
            ("in_set", [set, value]) => {
                let Expr::StringConstant(set, _) = set else {
                    return unsupported("in_set with a set name that is not a literal");
                };
                // An unknown set is a run-time error in Rhai; leave it to the interpreter.
                let Some(members) = self.context.sets.get(set.as_str()) else {
                    return unsupported(format!("in_set with the unknown set '{set}'"));
                };
                let members = members.clone();
                let Value::Str(value) = self.expr(value)? else {
                    return unsupported("in_set on a value that is not a string");
                };
                let max = self.context.max_string_size;
                Ok(Value::Bool(Box::new(move |i, _| {
                    Ok(context::set_contains(&members, value.get(i, max)?))
                })))
            }
            (name, _) => unsupported(format!("the function `{name}`")),
        }
    }

    fn unary(&mut self, token: &Token, operand: &Expr) -> Result<Value, Unsupported> {
        let operand = self.expr(operand)?;
        match (token, operand) {
            (Token::Bang, Value::Bool(f)) => Ok(Value::Bool(Box::new(move |i, l| Ok(!f(i, l)?)))),
            (Token::Minus | Token::UnaryMinus, Value::Int(f)) => {
                Ok(Value::Int(Box::new(move |i, l| {
                    f(i, l)?.checked_neg().ok_or(Fault)
                })))
            }
            (Token::Minus | Token::UnaryMinus, Value::Float(f)) => {
                Ok(Value::Float(Box::new(move |i, l| Ok(-f(i, l)?))))
            }
            (token, operand) => unsupported(format!(
                "the operator {} on {}",
                token.literal_syntax(),
                operand.type_name()
            )),
        }
    }

    fn binary(&mut self, token: &Token, lhs: &Expr, rhs: &Expr) -> Result<Value, Unsupported> {
        let lhs = self.expr(lhs)?;
        let rhs = self.expr(rhs)?;
        if let Some(op) = Arith::of(token) {
            return match (lhs, rhs) {
                (Value::Int(x), Value::Int(y)) => Ok(Value::Int(Box::new(move |i, l| {
                    let (x, y) = (x(i, l)?, y(i, l)?);
                    op.int(x, y)
                }))),
                (x @ (Value::Int(_) | Value::Float(_)), y @ (Value::Int(_) | Value::Float(_))) => {
                    let (Some(x), Some(y)) = (x.into_float(), y.into_float()) else {
                        return unsupported("arithmetic on non-numbers");
                    };
                    Ok(Value::Float(Box::new(move |i, l| {
                        let (x, y) = (x(i, l)?, y(i, l)?);
                        Ok(op.float(x, y))
                    })))
                }
                (x, y) => unsupported(format!(
                    "{} {} {}",
                    x.type_name(),
                    token.literal_syntax(),
                    y.type_name()
                )),
            };
        }
        let Some(op) = Cmp::of(token) else {
            return unsupported(format!("the operator {}", token.literal_syntax()));
        };
        match (lhs, rhs) {
            (Value::Int(x), Value::Int(y)) => Ok(Value::Bool(Box::new(move |i, l| {
                let (x, y) = (x(i, l)?, y(i, l)?);
                Ok(op.apply(x, y))
            }))),
            (Value::Bool(x), Value::Bool(y)) => Ok(Value::Bool(Box::new(move |i, l| {
                let (x, y) = (x(i, l)?, y(i, l)?);
                Ok(op.apply(x, y))
            }))),
            (Value::Str(x), Value::Str(y)) if matches!(op, Cmp::Eq | Cmp::Ne) => {
                let max = self.context.max_string_size;
                Ok(Value::Bool(Box::new(move |i, _| {
                    let (x, y) = (x.get(i, max)?, y.get(i, max)?);
                    Ok(op.apply(x, y))
                })))
            }
            (x @ (Value::Int(_) | Value::Float(_)), y @ (Value::Int(_) | Value::Float(_))) => {
                let (Some(x), Some(y)) = (x.into_float(), y.into_float()) else {
                    return unsupported("comparison of non-numbers");
                };
                Ok(Value::Bool(Box::new(move |i, l| {
                    let (x, y) = (x(i, l)?, y(i, l)?);
                    Ok(float_compare(op, x, y))
                })))
            }
            (x, y) => unsupported(format!(
                "{} {} {}",
                x.type_name(),
                token.literal_syntax(),
                y.type_name()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Random expressions of the translated subset, evaluated natively and by Rhai over random
    //! inputs: the same value (type and bits) or an error in both.

    use std::path::{Path, PathBuf};

    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use rhai::Scope;

    use super::*;
    use crate::engine::accounts::{GraphFacts, PartyFacts};
    use crate::engine::rules::{ListFacts, RuleSet, SandboxLimits, ScreeningFacts};
    use crate::engine::state::{Aggregates, Event};
    use crate::model::transaction::{AnonymizedUserData, Limits, TransactionData};
    use crate::model::{Direction, Transaction, TransactionPayload};

    const MANIFEST: &str = r#"
[pack]
name = "random"
version = "1"
[decision]
review = 0.5
reject = 0.8
[params]
big = 9223372036854775807
seven = 7
ratio = 0.1
threshold = 1000.0
name = "NG"
flag = true
[sets]
risky = ["kp", "IR", "Iran"]
"#;

    type Sets = Arc<HashMap<String, HashSet<String>>>;

    fn context_parts() -> (HashMap<String, Dynamic>, Sets) {
        let constants = HashMap::from([
            ("BIG".to_owned(), Dynamic::from(INT::MAX)),
            ("SEVEN".to_owned(), Dynamic::from(7 as INT)),
            ("RATIO".to_owned(), Dynamic::from(0.1 as FLOAT)),
            ("THRESHOLD".to_owned(), Dynamic::from(1000.0 as FLOAT)),
            ("NAME".to_owned(), Dynamic::from("NG")),
            ("FLAG".to_owned(), Dynamic::from(true)),
        ]);
        let sets = HashMap::from([(
            "risky".to_owned(),
            ["KP", "IR", "IRAN"].iter().map(|s| s.to_string()).collect(),
        )]);
        (constants, Arc::new(sets))
    }

    fn pick<'a>(rng: &mut StdRng, items: &[&'a str]) -> &'a str {
        items[rng.random_range(0..items.len())]
    }

    struct Gen {
        rng: StdRng,
        /// `let` bindings so far: (name, type).
        locals: Vec<(String, Ty)>,
    }

    impl Gen {
        fn local(&mut self, ty: Ty) -> Option<String> {
            let names: Vec<&String> = self
                .locals
                .iter()
                .filter(|(_, t)| *t == ty)
                .map(|(n, _)| n)
                .collect();
            if names.is_empty() {
                return None;
            }
            Some(names[self.rng.random_range(0..names.len())].clone())
        }

        fn int(&mut self, depth: u32) -> String {
            let choice = self.rng.random_range(0..if depth == 0 { 4 } else { 9 });
            match choice {
                0 => pick(
                    &mut self.rng,
                    &[
                        "0",
                        "1",
                        "2",
                        "-1",
                        "24",
                        "60",
                        "1000",
                        "9223372036854775807",
                        "-9223372036854775807",
                    ],
                )
                .to_owned(),
                1 => pick(
                    &mut self.rng,
                    &[
                        "agg.debit_count_1h",
                        "agg.credit_count_24h",
                        "agg.distinct_receivers_24h",
                        "agg.history_count",
                        "receiver.fan_in_30d",
                        "sender.out_count_24h",
                        "graph.cycle_length",
                        "graph.chain_length",
                        "tx.hour",
                        "tx.weekday",
                        "tx.timestamp",
                        "device.known_count",
                    ],
                )
                .to_owned(),
                2 => pick(&mut self.rng, &["BIG", "SEVEN"]).to_owned(),
                3 => self.local(Ty::Int).unwrap_or_else(|| "3".to_owned()),
                4 | 5 => {
                    let op = pick(&mut self.rng, &["+", "-", "*", "/", "%"]);
                    format!("({} {op} {})", self.int(depth - 1), self.int(depth - 1))
                }
                6 => format!("-({})", self.int(depth - 1)),
                7 => format!(
                    "(if {} {{ {} }} else {{ {} }})",
                    self.bool(depth - 1),
                    self.int(depth - 1),
                    self.int(depth - 1)
                ),
                _ => {
                    let method = pick(
                        &mut self.rng,
                        &["count_debits_within", "count_credits_within"],
                    );
                    if self.rng.random_bool(0.3) {
                        format!(
                            "agg.count_debits_between({}, {}, {})",
                            self.float(depth - 1),
                            self.float(depth - 1),
                            self.int(depth - 1)
                        )
                    } else {
                        format!("agg.{method}({})", self.int(depth - 1))
                    }
                }
            }
        }

        fn float(&mut self, depth: u32) -> String {
            let choice = self.rng.random_range(0..if depth == 0 { 4 } else { 9 });
            match choice {
                0 => pick(
                    &mut self.rng,
                    &[
                        "0.0",
                        "1.5",
                        "-2.25",
                        "1e300",
                        "1e-300",
                        "100000.0",
                        "0.1",
                        "1000.0000000000001",
                    ],
                )
                .to_owned(),
                1 => pick(
                    &mut self.rng,
                    &[
                        "tx.amount",
                        "tx.balance_before",
                        "tx.usd_amount",
                        "agg.debit_sum_24h",
                        "agg.seconds_since_last",
                        "agg.travel_speed_kmh",
                        "sender.pass_through_7d",
                        "receiver.in_sum_7d",
                        "limits.daily",
                        "user.account_age_days",
                        "user.age",
                        "location.latitude",
                    ],
                )
                .to_owned(),
                2 => pick(&mut self.rng, &["RATIO", "THRESHOLD"]).to_owned(),
                3 => self.local(Ty::Float).unwrap_or_else(|| "2.5".to_owned()),
                4 | 5 => {
                    let op = pick(&mut self.rng, &["+", "-", "*", "/", "%"]);
                    let (a, b) = match self.rng.random_range(0..3) {
                        0 => (self.float(depth - 1), self.float(depth - 1)),
                        1 => (self.int(depth - 1), self.float(depth - 1)),
                        _ => (self.float(depth - 1), self.int(depth - 1)),
                    };
                    format!("({a} {op} {b})")
                }
                6 => format!("-({})", self.float(depth - 1)),
                7 => format!(
                    "(if {} {{ {} }} else {{ {} }})",
                    self.bool(depth - 1),
                    self.float(depth - 1),
                    self.float(depth - 1)
                ),
                _ => {
                    let method = pick(
                        &mut self.rng,
                        &[
                            "debits_today",
                            "closest_credit_ratio_within",
                            "sum_debits_within",
                            "sum_credits_within",
                        ],
                    );
                    format!("agg.{method}({})", self.int(depth - 1))
                }
            }
        }

        fn string(&mut self) -> String {
            pick(
                &mut self.rng,
                &[
                    "user.country",
                    "counterparty.country",
                    "location.country",
                    "tx.narration",
                    "tx.channel",
                    "device.id",
                    "screening.sender_sanction",
                    "screening.receiver_pep",
                    "\"NG\"",
                    "\"match\"",
                    "\"\"",
                    "NAME",
                ],
            )
            .to_owned()
        }

        fn bool(&mut self, depth: u32) -> String {
            let choice = self.rng.random_range(0..if depth == 0 { 4 } else { 11 });
            match choice {
                0 => pick(&mut self.rng, &["true", "false", "FLAG"]).to_owned(),
                1 => pick(
                    &mut self.rng,
                    &[
                        "tx.is_debit",
                        "tx.has_balance",
                        "tx.is_dormant_account",
                        "user.is_new",
                        "user.is_banned",
                        "device.is_new",
                        "limits.has_daily",
                        "lists.account",
                        "agg.counterparty_seen_24h",
                        "graph.new_pair",
                        "graph.cycle",
                    ],
                )
                .to_owned(),
                2 => self.local(Ty::Bool).unwrap_or_else(|| "true".to_owned()),
                3 => format!("in_set(\"risky\", {})", self.string()),
                4 => format!("({} && {})", self.bool(depth - 1), self.bool(depth - 1)),
                5 => format!("({} || {})", self.bool(depth - 1), self.bool(depth - 1)),
                6 => format!("!({})", self.bool(depth - 1)),
                7 | 8 => {
                    let op = pick(&mut self.rng, &["==", "!=", ">", ">=", "<", "<="]);
                    let (a, b) = match self.rng.random_range(0..4) {
                        0 => (self.int(depth - 1), self.int(depth - 1)),
                        1 => (self.float(depth - 1), self.float(depth - 1)),
                        2 => (self.int(depth - 1), self.float(depth - 1)),
                        _ => (self.float(depth - 1), self.int(depth - 1)),
                    };
                    format!("({a} {op} {b})")
                }
                9 => {
                    let op = pick(&mut self.rng, &["==", "!="]);
                    if self.rng.random_bool(0.5) {
                        format!("({} {op} {})", self.string(), self.string())
                    } else {
                        format!("({} {op} {})", self.bool(depth - 1), self.bool(depth - 1))
                    }
                }
                _ => format!(
                    "(if {} {{ {} }} else {{ {} }})",
                    self.bool(depth - 1),
                    self.bool(depth - 1),
                    self.bool(depth - 1)
                ),
            }
        }

        fn of(&mut self, ty: Ty, depth: u32) -> String {
            match ty {
                Ty::Bool => self.bool(depth),
                Ty::Int => self.int(depth),
                Ty::Float => self.float(depth),
                Ty::Str => self.string(),
            }
        }

        /// A script: some `let` bindings, then an expression of `result` type.
        fn script(&mut self, result: Ty) -> String {
            let mut script = String::new();
            for n in 0..self.rng.random_range(0..4) {
                let ty = [Ty::Bool, Ty::Int, Ty::Float][self.rng.random_range(0..3)];
                let depth = self.rng.random_range(0..4);
                let value = self.of(ty, depth);
                // Shadowing an earlier name now and then.
                let name = if n > 0 && self.rng.random_bool(0.2) {
                    "v0".to_owned()
                } else {
                    format!("v{n}")
                };
                script.push_str(&format!("let {name} = {value};\n"));
                self.locals.retain(|(n, _)| *n != name);
                self.locals.push((name, ty));
            }
            let depth = self.rng.random_range(0..5);
            script.push_str(&self.of(result, depth));
            script
        }
    }

    fn random_input(rng: &mut StdRng) -> Arc<RuleInput> {
        let amounts = [
            0.0,
            1.0,
            1000.0,
            1000.0000000000001,
            4_600_000.0,
            f64::MAX,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e-300,
        ];
        let amount = |rng: &mut StdRng| {
            if rng.random_bool(0.5) {
                amounts[rng.random_range(0..amounts.len())]
            } else {
                rng.random_range(0.0..2_000_000.0)
            }
        };
        let counts = [0u32, 1, 2, u32::MAX, 7, 24];
        let count = |rng: &mut StdRng| counts[rng.random_range(0..counts.len())];
        let texts = [
            "",
            "NG",
            " kp ",
            "iran",
            "match",
            "clear",
            "potential match",
        ];
        let text = |rng: &mut StdRng| texts[rng.random_range(0..texts.len())];
        let credit = rng.random_bool(0.3);
        let tx_amount = amount(rng).abs();
        let time_s: i64 = rng.random_range(0..4_000_000_000);
        let payload = TransactionPayload {
            transaction_data: Some(TransactionData {
                reference: Some("r".into()),
                amount: Some(tx_amount),
                narration: Some(text(rng).into()),
                channel: rng.random_bool(0.5).then(|| text(rng).into()),
                balance_before: rng.random_bool(0.5).then(|| amount(rng)),
                usd_exchange_rate: rng.random_bool(0.5).then(|| rng.random_range(0.0001..2.0)),
                is_dormant_account: rng.random_bool(0.5).then(|| rng.random_bool(0.5)),
                ..TransactionData::default()
            }),
            anonymized_user_data: Some(AnonymizedUserData {
                unique_id: Some("u".into()),
                country: Some(text(rng).into()),
                is_banned: Some(rng.random_bool(0.2)),
                age: rng.random_bool(0.5).then(|| rng.random_range(0.0..100.0)),
                ..AnonymizedUserData::default()
            }),
            limits: rng.random_bool(0.7).then(|| Limits {
                daily_limit: rng.random_bool(0.7).then(|| amount(rng)),
                overdraft_limit: None,
                individual_transaction_limit: None,
            }),
            ..TransactionPayload::default()
        };
        let now = time_s as u32;
        let mut recent: Vec<Event> = (0..rng.random_range(0..20))
            .map(|_| {
                let direction = if rng.random_bool(0.5) {
                    Direction::Credit
                } else {
                    Direction::Debit
                };
                Event::new(
                    now.saturating_sub(rng.random_range(0..100_000)),
                    amount(rng),
                    direction,
                    rng.random_range(0..4),
                )
            })
            .collect();
        recent.sort_by_key(|e| e.ts);
        let agg = Aggregates {
            debit_count: [count(rng), count(rng), count(rng), count(rng)],
            debit_sum: [amount(rng), amount(rng), amount(rng), amount(rng)],
            credit_count: [count(rng), count(rng), count(rng), count(rng)],
            credit_sum: [amount(rng), amount(rng), amount(rng), amount(rng)],
            distinct_counterparties_24h: count(rng),
            distinct_receivers_24h: count(rng),
            distinct_senders_24h: count(rng),
            daily_debit_total: amount(rng),
            seconds_since_last: amount(rng),
            days_since_last_active: amount(rng),
            days_since_first_seen: amount(rng),
            distance_km: amount(rng),
            travel_speed_kmh: amount(rng),
            history_count: count(rng),
            closest_credit_ratio_24h: amount(rng),
            closest_credit_age_minutes: amount(rng),
            counterparty_seen_24h: rng.random_bool(0.5),
        };
        let event_time_ms = time_s * 1000;
        Arc::new(RuleInput {
            tx: Transaction {
                payload,
                reference: "r".into(),
                user_id: "u".into(),
                amount: tx_amount,
                direction: if credit {
                    Direction::Credit
                } else {
                    Direction::Debit
                },
                event_time_ms,
                received_at_ms: event_time_ms,
                future_dated: false,
                coordinates: rng.random_bool(0.5).then(|| {
                    (
                        rng.random_range(-90.0..90.0),
                        rng.random_range(-180.0..180.0),
                    )
                }),
                date_joined_ms: rng
                    .random_bool(0.7)
                    .then(|| event_time_ms - rng.random_range(-5..400) * 86_400_000),
            },
            agg,
            recent,
            device_is_new: rng.random_bool(0.5),
            known_devices: rng.random_range(0..3),
            lists: ListFacts::default(),
            screening: ScreeningFacts::default(),
            graph: Box::new(GraphFacts {
                sender: party(rng),
                receiver: party(rng),
                new_pair: rng.random_bool(0.5),
                cycle_length: rng.random_range(0..6),
                chain_length: rng.random_range(0..8),
                scatter_gather: rng.random_range(0..5),
                layered_senders: rng.random_range(0..4),
                layered_receivers: rng.random_range(0..4),
                evidence: Vec::new(),
            }),
        })
    }

    fn party(rng: &mut impl Rng) -> PartyFacts {
        let mut facts = PartyFacts {
            present: true,
            days_since_first_seen: rng.random_range(-1.0..60.0),
            fan_in: rng.random_range(0..9),
            fan_in_days: rng.random_range(0..9),
            fan_out: rng.random_range(0..9),
            fan_out_days: rng.random_range(0..9),
            pass_through_7d: rng.random_range(0.0..2.0),
            ..PartyFacts::default()
        };
        for w in 0..3 {
            facts.in_count[w] = rng.random_range(0..40);
            facts.out_count[w] = rng.random_range(0..40);
            facts.in_sum[w] = rng.random_range(0.0..1e6);
            facts.out_sum[w] = rng.random_range(0.0..1e6);
        }
        facts
    }

    fn rhai_value(value: &Dynamic) -> Option<Computed> {
        if let Ok(b) = value.as_bool() {
            return Some(Computed::Bool(b));
        }
        if let Ok(n) = value.as_int() {
            return Some(Computed::Int(n));
        }
        if let Ok(x) = value.as_float() {
            return Some(Computed::Float(x));
        }
        value
            .clone()
            .into_immutable_string()
            .ok()
            .map(|s| Computed::Str(s.to_string()))
    }

    fn same(a: &Computed, b: &Computed) -> bool {
        match (a, b) {
            (Computed::Float(x), Computed::Float(y)) => {
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
            }
            _ => a == b,
        }
    }

    /// Compiles `script` as the only rule of a set, translates it, and compares both paths over
    /// `inputs`; returns how many evaluations errored.
    fn check(script: &str, inputs: &[Arc<RuleInput>]) -> Result<usize, TestCaseError> {
        let sources = [(
            PathBuf::from("R.rhai"),
            format!(
                "//! id = \"R\"\n//! name = \"R\"\n//! description = \"R\"\n//! severity = \"low\"\n//! score = 0.1\n{script}\n"
            ),
        )];
        let set = RuleSet::compile(
            Path::new("pack.toml"),
            MANIFEST,
            &sources,
            SandboxLimits::default(),
        )
        .map_err(|e| TestCaseError::fail(format!("{script}\ndoes not compile: {e}")))?;
        let rule = &set.rules[0];
        let (constants, sets) = context_parts();
        let context = Context {
            constants: &constants,
            sets: &sets,
            max_operations: 50_000,
            max_string_size: 16 * 1024,
        };
        let native = translate_expression(&rule.ast, &context)
            .map_err(|e| TestCaseError::fail(format!("{script}\nnot translated: {e}")))?;
        let mut errors = 0;
        let mut scope = Scope::new();
        for input in inputs {
            let base = RuleSet::push_views(input, &mut scope);
            scope.rewind(base);
            let interpreted = set
                .engine
                .eval_ast_with_scope::<Dynamic>(&mut scope, &rule.ast);
            let computed = native.compute(input);
            match (&interpreted, &computed) {
                (Ok(value), Ok(computed)) => {
                    let value = rhai_value(value).ok_or_else(|| {
                        TestCaseError::fail(format!("{script}\nRhai returned {value:?}"))
                    })?;
                    prop_assert!(
                        same(&value, computed),
                        "{}\nRhai {:?}, native {:?}",
                        script,
                        value,
                        computed
                    );
                }
                (Err(_), Err(Fault)) => errors += 1,
                _ => prop_assert!(
                    false,
                    "{}\nRhai {:?}, native {:?}",
                    script,
                    interpreted,
                    computed
                ),
            }
        }
        Ok(errors)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1500))]

        #[test]
        fn random_expressions_agree_with_rhai(seed in any::<u64>(), result in 0usize..4) {
            let mut rng = StdRng::seed_from_u64(seed);
            let inputs: Vec<Arc<RuleInput>> = (0..8).map(|_| random_input(&mut rng)).collect();
            let mut generator = Gen { rng, locals: Vec::new() };
            let ty = [Ty::Bool, Ty::Int, Ty::Float, Ty::Str][result];
            let script = generator.script(ty);
            check(&script, &inputs)?;
        }
    }

    #[test]
    fn errors_are_left_to_the_interpreter() {
        let mut rng = StdRng::seed_from_u64(7);
        let inputs: Vec<Arc<RuleInput>> = (0..16).map(|_| random_input(&mut rng)).collect();
        for script in [
            "BIG + 1 > 0",
            "agg.history_count + BIG",
            "-(BIG) - 2",
            "SEVEN / (agg.debit_count_1h - agg.debit_count_1h)",
            "SEVEN % 0",
            "let x = BIG * 2; false",
            "false && (BIG + 1 > 0)",
        ] {
            check(script, &inputs).expect(script);
        }
        let errors = check("let x = BIG * 2; false", &inputs).expect("checks");
        assert_eq!(errors, inputs.len());
        let errors = check("false && (BIG + 1 > 0)", &inputs).expect("checks");
        assert_eq!(errors, 0);
    }

    #[test]
    fn float_comparisons_follow_rhai_epsilon() {
        let mut rng = StdRng::seed_from_u64(11);
        let inputs = vec![random_input(&mut rng)];
        for script in [
            "1000.0 == 1000.0000000000001",
            "1000.0 < 1000.0000000000001",
            "1000.0 >= 1000.0000000000001",
            "0.0 == -0.0",
            "tx.amount == tx.amount",
            "1 == 1.0000000000000002",
            "2 > 1.9999999999999998",
        ] {
            check(script, &inputs).expect(script);
        }
    }

    #[test]
    fn long_strings_hit_the_string_limit_in_both() {
        let mut rng = StdRng::seed_from_u64(3);
        let input = random_input(&mut rng);
        let mut input = (*input).clone();
        if let Some(data) = input.tx.payload.transaction_data.as_mut() {
            data.narration = Some("n".repeat(20_000).into());
        }
        let errors = check("tx.narration == \"x\"", &[Arc::new(input)]).expect("checks");
        assert_eq!(errors, 1);
    }
}
