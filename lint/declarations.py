"""The names a statement sees. PTX declarations are lexically scoped per `{ }` block (ptxas 13):
a name resolves to the innermost enclosing block that declares it, a block's declarations end with
the block, sibling blocks are independent (CUDA's fp16/bf16 headers declare `spc`, `c`, `r` ... with
other types in nested and sibling inline-asm blocks). A register or variable is visible from its
declaration on (ptxas reads an earlier use as a forward label reference); a label throughout its
block. A function's parameters belong to its body block: the body cannot declare them again, an
inner block may shadow them.

A `Declarations` is one block: its own names, and its parent (the enclosing block, the module).
Lookups walk outwards, seeing only declarations made before `now` (the serial of the statement
being checked; every statement of a module has one, in source order)."""

from __future__ import annotations

from dataclasses import dataclass, field

ALWAYS = -1  # the serial of declarations visible to every statement of their block
NEVER = 1 << 62
PREDEFINED = frozenset({"WARP_SZ"})  # identifiers PTX defines itself (PTX ISA 5.3)


@dataclass
class Declarations:
    """The registers (`.reg` variables and register parameters), variables and labels of one block."""

    names: dict[str, str] = field(default_factory=dict)       # register -> its type without the dot
    prefixes: list[tuple[str, int, str, int]] = field(default_factory=list)  # `%r<9>`: (%r, 9, type, serial)
    labels: set[str] = field(default_factory=set)
    symbols: dict[str, str] = field(default_factory=dict)     # variable -> its state space (`.global` ...)
    entry_params: set[str] = field(default_factory=set)       # a kernel's parameters (read-only)
    functions: set[str] = field(default_factory=set)          # the module's `.func`/`.entry` names
    complete: bool = True  # False where a declaration form is not understood: no undeclared findings
    parent: Declarations | None = None
    since: dict[str, int] = field(default_factory=dict)       # name -> serial of its declaration
    now: int = NEVER  # the serial of the statement being checked (lookups see what was declared before)

    # --- declaring ------------------------------------------------------------------------

    def add_register(self, name: str, rtype: str | None, count: str | None = None, merge: bool = False,
                     serial: int = ALWAYS) -> bool:
        """Declare `name` (or `name<count>`); True when the block declared it already (ptxas:
        duplicate definition). ``merge``: a name seen again with another type becomes untyped
        (the DSL sees several functions' declarations in one scope)."""
        rtype = (rtype or "").lstrip(".")
        self.__dict__.pop("_candidates", None)
        if count is None:
            duplicate = self._declares(name)
            if merge and name in self.names and self.names[name] != rtype:
                rtype = ""
            self.names[name] = rtype
            self.since.setdefault(name, serial)
            return duplicate and not merge
        try:
            n = int(count, 0)
        except ValueError:
            self.complete = False
            return False
        for i, (prefix, old_n, old_t, old_serial) in enumerate(self.prefixes):
            if prefix == name:
                if merge:
                    self.prefixes[i] = (prefix, max(n, old_n), old_t if old_t == rtype else "", old_serial)
                    return False
                break
        duplicate = any(self._prefix_covers(name, n, own) for own in self.names) or any(
            p == name for p, *_ in self.prefixes)
        self.prefixes.append((name, n, rtype, serial))
        self.__dict__.pop("_prefix_cache", None)
        return duplicate and not merge

    def add_symbol(self, name: str, space: str, serial: int = ALWAYS) -> bool:
        """Declare a variable of a state space; True when the block declared the name already."""
        duplicate = self._declares(name)
        self.__dict__.pop("_candidates", None)
        self.symbols[name] = space
        self.since.setdefault(name, serial)
        return duplicate

    def _declares(self, name: str) -> bool:
        return name in self.names or name in self.symbols or self._own_prefix(name, NEVER) is not None

    @staticmethod
    def _prefix_covers(prefix: str, count: int, name: str) -> bool:
        rest = name[len(prefix):] if name.startswith(prefix) else ""
        return rest.isdigit() and (rest == "0" or not rest.startswith("0")) and int(rest) < count

    # --- looking up -----------------------------------------------------------------------

    def _own(self, name: str, now: int):
        """('reg', type) | ('sym', space) | None: this block's own declaration of `name` before `now`."""
        rtype = self.names.get(name)
        if rtype is not None and self.since.get(name, ALWAYS) < now:
            return "reg", rtype
        space = self.symbols.get(name)
        if space is not None and self.since.get(name, ALWAYS) < now:
            return "sym", space
        if self.prefixes:
            rtype = self._own_prefix(name, now)
            if rtype is not None:
                return "reg", rtype
        return None

    def _own_prefix(self, name: str, now: int) -> str | None:
        cache = self.__dict__.setdefault("_prefix_cache", {})
        found = cache.get(name, False)
        if found is False:
            found = cache[name] = next(((rtype, serial) for prefix, count, rtype, serial in self.prefixes
                                        if self._prefix_covers(prefix, count, name)), None)
        return found[0] if found is not None and found[1] < now else None

    def _find(self, name: str):
        """The innermost declaration of `name` made before `now`: the first of its candidates
        (every enclosing block's own declaration of it, innermost first; cached, as lookups
        come after the blocks are declared) whose serial is earlier."""
        cache = self.__dict__.setdefault("_candidates", {})
        candidates = cache.get(name)
        if candidates is None:
            candidates = cache[name] = self._candidates_of(name)
        now = self.now
        for since, found in candidates:
            if since < now:
                return found
        return None

    def _candidates_of(self, name: str) -> list:
        out, scope = [], self
        while scope is not None:
            for since, found in scope._own_all(name):
                out.append((since, found))
            scope = scope.parent
        return out

    def _own_all(self, name: str):
        """(serial, ('reg', type) | ('sym', space)) of this block's own declarations of `name`."""
        if name in self.names:
            yield self.since.get(name, ALWAYS), ("reg", self.names[name])
        if name in self.symbols:
            yield self.since.get(name, ALWAYS), ("sym", self.symbols[name])
        for prefix, count, rtype, serial in self.prefixes:
            if self._prefix_covers(prefix, count, name):
                yield serial, ("reg", rtype)
                break

    def register_type(self, name: str) -> str | None:
        """The declared type without its dot ('' when declared untyped), None when `name` is no
        register in scope."""
        found = self._find(name)
        return found[1] if found is not None and found[0] == "reg" else None

    def symbol_space(self, name: str) -> str | None:
        """The state space of the variable `name` resolves to, None when it is no variable in scope."""
        found = self._find(name)
        return found[1] if found is not None and found[0] == "sym" else None

    def _chain(self):
        """This scope and its enclosing ones, innermost first."""
        scope = self
        while scope is not None:
            yield scope
            scope = scope.parent

    def has_label(self, name: str) -> bool:
        return any(name in scope.labels for scope in self._chain())

    def is_entry_param(self, name: str) -> bool:
        for scope in self._chain():
            if name in scope.entry_params:
                return True
            if scope._own(name, self.now) is not None:  # shadowed by an inner block
                return False
        return False

    def is_complete(self) -> bool:
        return all(scope.complete for scope in self._chain())

    def knows(self, name: str) -> bool:
        """True where `name` is declared in scope as anything (register, variable, label, function)."""
        if self._find(name) is not None or self.has_label(name) or name in PREDEFINED:
            return True
        return any(name in scope.functions for scope in self._chain())

    def names_variable_or_label(self, name: str) -> bool:
        """True where `name` is no register but a variable or label in scope: identifiers may begin
        with `%` (`.global .b32 %g;`, `%L1:`), so the spelling alone does not say what a name is."""
        found = self._find(name)
        if found is not None:
            return found[0] == "sym"
        return self.has_label(name)


def add_params(decl: Declarations, head) -> None:
    """A function's parameters, into its body block."""
    for plist in (head.returns, head.params):
        for p in (plist.params if plist is not None else ()):
            if p.space == ".param":
                decl.add_symbol(p.name, ".param")
                if head.kind == ".entry" and plist is head.params:
                    decl.entry_params.add(p.name)
            if p.space == ".reg":
                words = [a for a in p.attrs if isinstance(a, str) and not a.startswith(".v")]
                decl.add_register(p.name, words[-1] if words else None)


def declare(decl: Declarations, node, serial: int = ALWAYS) -> list[str]:
    """Add a VarDecl's names to the block; the names it declares a second time."""
    twice = []
    for d in node.declarators:
        if node.space == ".reg":
            again = decl.add_register(d.name, node.type, d.count, serial=serial)
        else:
            again = decl.add_symbol(d.name, node.space, serial)
        if again:
            twice.append(d.name)
    return twice


def function_declarations(function, module_scope: Declarations | None = None) -> Declarations:
    """The names visible everywhere in a function, its blocks flattened (for callers checking one
    instruction at a time; `lint_module` resolves each statement in its own block)."""
    from ptx2py.ptxgrammar.tree.declarations import VarDecl
    from ptx2py.ptxgrammar.tree.statements import Label

    decl = Declarations(parent=module_scope)
    add_params(decl, function.head)
    for node in function.walk():
        if isinstance(node, VarDecl):
            declare(decl, node)
        elif isinstance(node, Label):
            decl.labels.add(node.name)
    return decl


def module_declarations(module) -> Declarations:
    from ptx2py.ptxgrammar.tree.declarations import VarDecl

    decl = Declarations()
    for item in module.items:
        if isinstance(item, VarDecl):
            declare(decl, item)
    return decl
