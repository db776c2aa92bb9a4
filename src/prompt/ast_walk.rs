//! A walk over a parsed template's tree that finds what reaches beyond the
//! template's own text: function calls (the sandbox's fence), macro calls,
//! includes and `extends` (the call graph's edges). The tree is at most as
//! deep as [`super::nesting`] lets a template nest, so the walk's recursion
//! is bounded.

use std::collections::HashMap;

use tera::ast::{Expr, ExprVal, FunctionCall, MacroCall, Node};

/// What the walk reports.
#[derive(Debug, Clone, Copy)]
pub enum Found<'a> {
    Function(&'a FunctionCall),
    Macro(&'a MacroCall),
    /// `{% include %}` of one of these templates.
    Include(&'a [String]),
    /// `{% extends %}` of this template.
    Extends(&'a str),
}

/// Visit everything of [`Found`] in `nodes`; inside the bodies of macros
/// defined there too when `into_macros`.
pub fn walk_nodes<'a>(nodes: &'a [Node], into_macros: bool, visit: &mut dyn FnMut(Found<'a>)) {
    for node in nodes {
        match node {
            Node::VariableBlock(_, expr) => walk_expr(expr, visit),
            Node::MacroDefinition(_, definition, _) => {
                if into_macros {
                    for default in definition.args.values().flatten() {
                        walk_expr(default, visit);
                    }
                    walk_nodes(&definition.body, into_macros, visit);
                }
            }
            Node::Set(_, set) => walk_expr(&set.value, visit),
            Node::FilterSection(_, section, _) => {
                walk_args(&section.filter.args, visit);
                walk_nodes(&section.body, into_macros, visit);
            }
            Node::Block(_, block, _) => walk_nodes(&block.body, into_macros, visit),
            Node::Forloop(_, forloop, _) => {
                walk_expr(&forloop.container, visit);
                walk_nodes(&forloop.body, into_macros, visit);
                if let Some(empty) = &forloop.empty_body {
                    walk_nodes(empty, into_macros, visit);
                }
            }
            Node::If(branches, _) => {
                for (_, condition, body) in &branches.conditions {
                    walk_expr(condition, visit);
                    walk_nodes(body, into_macros, visit);
                }
                if let Some((_, body)) = &branches.otherwise {
                    walk_nodes(body, into_macros, visit);
                }
            }
            Node::Include(_, names, _) => visit(Found::Include(names)),
            Node::Extends(_, name) => visit(Found::Extends(name)),
            Node::Super
            | Node::Text(_)
            | Node::ImportMacro(..)
            | Node::Raw(..)
            | Node::Break(_)
            | Node::Continue(_)
            | Node::Comment(..) => {}
        }
    }
}

fn walk_args<'a>(args: &'a HashMap<String, Expr>, visit: &mut dyn FnMut(Found<'a>)) {
    for arg in args.values() {
        walk_expr(arg, visit);
    }
}

pub fn walk_expr<'a>(expr: &'a Expr, visit: &mut dyn FnMut(Found<'a>)) {
    walk_value(&expr.val, visit);
    for filter in &expr.filters {
        walk_args(&filter.args, visit);
    }
}

fn walk_value<'a>(value: &'a ExprVal, visit: &mut dyn FnMut(Found<'a>)) {
    match value {
        ExprVal::FunctionCall(call) => {
            visit(Found::Function(call));
            walk_args(&call.args, visit);
        }
        ExprVal::Math(math) => {
            walk_expr(&math.lhs, visit);
            walk_expr(&math.rhs, visit);
        }
        ExprVal::Logic(logic) => {
            walk_expr(&logic.lhs, visit);
            walk_expr(&logic.rhs, visit);
        }
        ExprVal::In(within) => {
            walk_expr(&within.lhs, visit);
            walk_expr(&within.rhs, visit);
        }
        ExprVal::Test(test) => {
            for arg in &test.args {
                walk_expr(arg, visit);
            }
        }
        ExprVal::MacroCall(call) => {
            visit(Found::Macro(call));
            walk_args(&call.args, visit);
        }
        ExprVal::Array(items) => {
            for item in items {
                walk_expr(item, visit);
            }
        }
        ExprVal::StringConcat(concat) => {
            for value in &concat.values {
                walk_value(value, visit);
            }
        }
        ExprVal::String(_)
        | ExprVal::Int(_)
        | ExprVal::Float(_)
        | ExprVal::Bool(_)
        | ExprVal::Ident(_) => {}
    }
}
