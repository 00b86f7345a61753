"""The typed, lossless PTX tree. Every node owns the trivia before its tokens."""

from .base import Node, joined
from .declarations import (
    Align,
    Attribute,
    Declarator,
    Function,
    FunctionHead,
    InitField,
    InitList,
    Param,
    ParamList,
    PerfDirective,
    VarDecl,
)
from .module import AddressSize, Alias, File, Module, Section, SectionData, SectionRef, Target, Version
from .operands import (
    Address,
    Applied,
    BinaryExpr,
    Cast,
    Conditional,
    FloatLiteral,
    Indexed,
    IntLiteral,
    Negation,
    Operand,
    Paren,
    ParenList,
    PredPair,
    Register,
    Sink,
    SpecialRegister,
    Symbol,
    UnaryExpr,
    Vector,
)
from .statements import Block, CallPrototype, Guard, Instruction, Label, LabelList, Loc, Pragma, Statement
from .trivia import Comment, LineMarker, Whitespace, comments, split_trivia

NODE_CLASSES = {
    cls.__name__: cls
    for cls in (
        Address, Applied, BinaryExpr, Cast, Conditional, FloatLiteral, Indexed, IntLiteral,
        Negation, Paren, ParenList, PredPair, Register, Sink, SpecialRegister, Symbol, UnaryExpr,
        Vector, Block, CallPrototype, Guard, Instruction, Label, LabelList, Loc, Pragma, Align,
        Attribute, Declarator, Function, FunctionHead, InitField, InitList, Param, ParamList,
        PerfDirective, VarDecl, AddressSize, Alias, File, Module, Section, SectionData, SectionRef,
        Target, Version,
    )
}

# the tree's public names (what `from ptx2py.ptxgrammar.tree import *` and the API reference show)
__all__ = [
    "Node", "joined", "Align", "Attribute", "Declarator", "Function", "FunctionHead", "InitField", "InitList",
    "Param", "ParamList", "PerfDirective", "VarDecl", "AddressSize", "Alias", "File", "Module", "Section",
    "SectionData", "SectionRef", "Target", "Version", "Address", "Applied", "BinaryExpr", "Cast", "Conditional",
    "FloatLiteral", "Indexed", "IntLiteral", "Negation", "Operand", "Paren", "ParenList", "PredPair", "Register",
    "Sink", "SpecialRegister", "Symbol", "UnaryExpr", "Vector", "Block", "CallPrototype", "Guard", "Instruction",
    "Label", "LabelList", "Loc", "Pragma", "Statement", "Comment", "LineMarker", "Whitespace", "comments",
    "split_trivia", "NODE_CLASSES",
]
