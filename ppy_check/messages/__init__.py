"""Every rule code and the templates of its messages, kept side by side.

A message always names the region and the offending thing by its source name,
so a reader can act on the line without opening the rule's documentation. The
rules build a Message (a template and its fields) from these templates, the
model builder fills the reasons of ``refusals`` (each entry its rule and
template), and ``Message.render`` is the one place either becomes text.
``tests/checker/test_refusals.py`` holds the builder to registry entries.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace


class Code(str, enum.Enum):  # enum.StrEnum is 3.11's; this is the same on 3.10
    """Every rule code, defined once here: the rule module (``ppy_check.rules.<module>``) that reports it and
    documents it in its docstring, and whether a default selection runs it. Order is the rules' order in
    ``--explain``, the README, SARIF and ``--statistics``."""

    UNTYPED = "ppy-untyped", "untyped"
    LOOP = "ppy-loop", "loop", True
    BRANCH = "ppy-branch", "branch", True
    CAPTURED = "ppy-captured", "captured"
    IMPURE = "ppy-impure", "impure"
    UNSUPPORTED = "ppy-unsupported", "unsupported"
    SYNTAX = "ppy-syntax", "syntax", True
    TYPE = "ppy-type", "type_errors"
    # Opt-in: known to `select`, `extend-select` and `--select`, never selected by default (the mypy plugin
    # leaves unused `# type: ignore` comments to mypy's own `warn_unused_ignores`).
    UNUSED_IGNORE = "ppy-unused-ignore", "unused_ignore", False, False

    module: str
    structural: bool  # read from a function's syntax alone, so a region's helpers are checked by it too
    default: bool  # in the default selection, and a region rule every front-end runs

    def __str__(self) -> str:  # the code itself, as StrEnum prints it, not `Code.LOOP`
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)

    def __new__(cls, code: str, module: str, structural: bool = False, default: bool = True) -> Code:
        member = str.__new__(cls, code)
        member._value_ = code
        member.module = module
        member.structural = structural
        member.default = default
        return member


# The codes as plain strings, as findings, configuration and output carry them.
UNTYPED = Code.UNTYPED.value
LOOP = Code.LOOP.value
BRANCH = Code.BRANCH.value
CAPTURED = Code.CAPTURED.value
IMPURE = Code.IMPURE.value
UNSUPPORTED = Code.UNSUPPORTED.value
SYNTAX = Code.SYNTAX.value
TYPE = Code.TYPE.value
UNUSED_IGNORE = Code.UNUSED_IGNORE.value

# The default selection: the region rules.
ALL_CODES: tuple[str, ...] = tuple(code.value for code in Code if code.default)
OPT_IN_CODES: tuple[str, ...] = tuple(code.value for code in Code if not code.default)
KNOWN_CODES: tuple[str, ...] = tuple(code.value for code in Code)

# Any finding inside a helper the region calls says how the region got there: the context, the steps from the
# helper out to the region, innermost first.
IN_HELPER = " ({context})"
IN_HELPER_CALLED = "in `{name}`, called at line {line}"
IN_HELPER_OF_FILE = "in `{name}` of {path}, called at line {line}"
IN_TORCH = "in torch's `{name}`"
HELPER_CHAIN = "{step}, {outer}"
# A finding in a helper that several regions inline is one mistake, reported once at the helper: its text names
# every region that reaches it, and how each got there.
REGION_PREFIX = "region `{region}`: "
REGIONS_PREFIX = "regions {regions}: "
NAMED = "`{name}`"
LIST_LAST = "{items} and {last}"
LIST_SEPARATOR = ", "
REACHED_FROM = "`{region}`: {context}"
REACHED_SEPARATOR = "; "


@dataclass(frozen=True)
class Message:
    """A finding's text before it is rendered: one of the templates below and its named fields. ``context``, how
    the region reached the helper the finding is in ("" in the region itself), closes the text (IN_HELPER)."""

    template: str
    fields: tuple[tuple[str, object], ...]
    context: str = ""

    def render(self) -> str:
        """The text, the one place any message is formatted: a field that is itself a Message (a refusal's
        reason) is rendered in turn."""
        fields = {name: value.render() if isinstance(value, Message) else value for name, value in self.fields}
        text = self.template.format(**fields)
        return text + IN_HELPER.format(context=self.context) if self.context else text

    def in_helper(self, context: str) -> Message:
        return replace(self, context=context)

    def seen_from(self, region: str, context: str) -> Message:
        """A helper's finding as a region that calls it reports it: in the region's name, saying how it got there."""
        fields = tuple((name, region if name == "region" else value) for name, value in self.fields)
        return replace(self, fields=fields, context=context)

    def opens_with_region(self) -> bool:
        """Whether the text can name several regions at once (``reached_by``): it opens with the region's name."""
        return self.template.startswith(REGION_PREFIX)

    def reached_by(self, reached: list[tuple[str, str]]) -> Message:
        """A helper's finding as several regions reach it, said once: each region named, and each way one got
        there (a region may reach it by several calls)."""
        names = [NAMED.format(name=region) for region in dict.fromkeys(region for region, _ in reached)]
        listed = LIST_LAST.format(items=LIST_SEPARATOR.join(names[:-1]), last=names[-1]) if len(names) > 1 else names[0]
        fields = tuple((name, value) for name, value in self.fields if name != "region") + (("regions", listed),)
        context = REACHED_SEPARATOR.join(REACHED_FROM.format(region=region, context=how) for region, how in reached)
        return Message(REGIONS_PREFIX + self.template.removeprefix(REGION_PREFIX), fields, context)


def message(template: str, context: str = "", **fields: object) -> Message:
    return Message(template, tuple(fields.items()), context)


@dataclass(frozen=True)
class Reason:
    """One reason the model builder refuses something, as mypy's message registry pairs a message with its code:
    the rule that reports it and a template whose named fields the builder fills (``messages.refusals``)."""

    code: Code
    template: str

    def __call__(self, **fields: object) -> Message:
        return Message(self.template, tuple(fields.items()))

# ppy-untyped
PARAM_UNANNOTATED = "region `{region}`: parameter `{name}` has no type annotation"
RETURN_UNANNOTATED = "region `{region}`: the return type is not annotated"
PARAM_BAD_TYPE = "region `{region}`: parameter `{name}` is annotated `{annotation}`, which a region cannot take ({why})"
RETURN_BAD_TYPE = "region `{region}`: the return is annotated `{annotation}`, which a region cannot return ({why})"
VARIADIC = "region `{region}`: `{star}{name}` is not allowed; give each argument a typed parameter of its own"

# ppy-loop
LOOP_FOR = ("region `{region}`: `for` loop iterates over `{iterable}` as `{target}`; a region is straight-line code, "
            "so move the loop to the caller and call the region once an item")
LOOP_WHILE = "region `{region}`: `while` loop on `{test}`; a region is straight-line code, so move the loop to the caller"
LOOP_COMPREHENSION = ("region `{region}`: {kind} iterates over {iterables}, a loop; a region is straight-line "
                      "code")

# ppy-branch
BRANCH_STATEMENT = "region `{region}`: `{keyword}` on `{test}` is a branch; pass both results' inputs and use `torch.where`, or branch in the caller"
BRANCH_EXPRESSION = "region `{region}`: conditional expression on `{test}` is a branch; use `torch.where` or branch in the caller"
BRANCH_OPTIONAL = ("region `{region}`: {construct} on `{test}` is a branch on whether `{name}` is None, which "
                   "`torch.where` cannot choose; write two regions, one taking `{name}` and one without it, and call "
                   "the one that fits from the caller's branch, or pass a neutral default (a zero mask, a zero bias) "
                   "instead of None")
BRANCH_BOOLOP = "region `{region}`: `{op}` in `{text}` short-circuits, which is a branch; use `torch.logical_{op}` or `&`/`|`"
BRANCH_MATCH = "region `{region}`: `match` on `{subject}` is a branch"
BRANCH_TRY = "region `{region}`: `try` is control flow a region cannot hold"
BRANCH_RAISE = "region `{region}`: `{text}` is a branch; check it in the caller"
# A check (an `assert`, or an `if` whose body only raises) that the compiled region cannot make as Python does
BRANCH_CHECK_TENSOR = ("region `{region}`: the check `{test}` reads a tensor's value, which would copy it back from "
                       "the device and wait for it on every call; check it in the caller, or test only shapes, ranks, "
                       "dtypes and numbers here")
BRANCH_CHECK_TEST = ("region `{region}`: the check `{test}` tests a `{type}`, whose truth ppy does not compute as "
                     "Python does; compare ints, floats, bools, shapes, ranks, dtypes or devices, or check it in the "
                     "caller")
BRANCH_CHECK_NOT_VALUE = ("region `{region}`: the check `{test}` tests a module or a function, which is always true; "
                          "remove it")
BRANCH_CHECK_EXCEPTION = ("region `{region}`: `{text}` raises `{name}`, which a compiled check cannot raise; raise one "
                          "of {known}, or check it in the caller")
BRANCH_CHECK_RAISE = ("region `{region}`: `{text}` is not a raise a compiled check makes; write `raise "
                      "ValueError(message)`, one exception of one message")
BRANCH_CHECK_MESSAGE = ("region `{region}`: the check's message `{text}` is not text ppy builds as Python does; write a "
                        "string, or an f-string of ints, floats, bools, strings, dtypes and shapes, with no format "
                        "spec and no `!r`")
BRANCH_CHAINED = ("region `{region}`: `{text}` on tensors is `and` of two comparisons, which reads a tensor's value: "
                  "a branch; write `(a < x) & (x < b)`")

# ppy-captured
CAPTURED_GLOBAL = "region `{region}`: reads module-level `{name}` (bound at line {line}); pass it as a parameter"
CAPTURED_IMPORTED = "region `{region}`: reads `{name}`, imported from `{origin}`; pass it as a parameter"
CAPTURED_CLOSURE = "region `{region}`: reads `{name}` from the enclosing function `{scope}`; pass it as a parameter"
CAPTURED_ATTRIBUTE = "region `{region}`: reads `{text}`, an attribute of `{name}`; pass `{attr}` as a parameter"
CAPTURED_REBOUND = ("region `{region}`: reads `{name}`, which `{how}` at line {line} rebinds, so a "
                    "call may see another value than a build would compile in; pass it as a parameter")
CAPTURED_STAR = ("region `{region}`: reads `{name}`, which `from {module} import *` at line {line} may rebind; import "
                 "the names you use by name (`from {module} import ...`), or bind `{name}` after that line")
CAPTURED_UNDEFINED = "region `{region}`: reads `{name}`, which is not defined in this module; pass it as a parameter"

# ppy-impure
IMPURE_WRITE = "region `{region}` is @ppy.pure but `{op}` writes parameter `{param}`"
IMPURE_OUT = "region `{region}` is @ppy.pure but `{op}` writes parameter `{param}` through `out=`"
IMPURE_STORE = "region `{region}` is @ppy.pure but `{text}` writes parameter `{param}`"

# ppy-unsupported
UNSUPPORTED_CALL = "region `{region}`: `{name}` has no ATen lowering ({why})"
UNSUPPORTED_ATTRIBUTE = "region `{region}`: `{text}` has no ATen lowering ({why})"
UNSUPPORTED_INTERNAL = ("region `{region}`: ppy could not model this region, and no rule said why "
                        "(a ppy bug worth reporting)")

# ppy-unsupported: the checker stopped following a region (ppy_check/model/budgets.py), by the budget that ran out
BUDGET_INT_BITS = ("region `{region}`: `{subject}` folds to an int of more than {limit:,.0f} bits where the region "
                   "is built (torch takes 64); compute it in the caller and pass it as a parameter")
BUDGET_ITEMS = ("region `{region}`: `{subject}` builds a tuple of more than {limit:,.0f} items (nested ones counted) "
                "where the region is built; build it in the caller and pass it as a parameter")
BUDGET_TEXT = ("region `{region}`: `{subject}` builds a string of more than {limit:,.0f} characters where the region "
               "is built; pass the string as a parameter")
BUDGET_STEPS = ("region `{region}`: `{subject}` takes more than {limit:,.0f} expressions to model, with the helpers it "
                "inlines (a helper that calls another twice doubles them at each level); compute each helper's "
                "result once and reuse it (`y = f(x)`, then `y + y`), or split the work into regions the caller "
                "calls in turn")
BUDGET_TIME = ("region `{region}`: not checked past `{subject}`: this file's regions took more than the {limit:g} s "
               "ppy-check spends on one file; split the file, or give it more time with PPY_CHECK_FILE_SECONDS")
BUDGET_DEPTH = ("region `{region}`: `{subject}` nests expressions or helper calls deeper than ppy follows; split it "
                "into statements, or call helpers less deep")
BUDGET_MEMORY = ("region `{region}`: modelling `{subject}` ran out of memory; compute it in the caller, or split it "
                 "into statements")
BUILDER_FAILED = ("region `{region}`: ppy-check failed modelling `{subject}` ({error}), a ppy bug worth reporting; "
                  "the region is refused and the rest of the file is checked")

# ppy-type
TYPE_PROBLEM = "region `{region}`: `{subject}`: {why}"

# The reason (a refusals entry) of a finding in torch's Python code, which names the user's call: where in it.
IN_LIBRARY = "at `{name}`: {why}"
# A refused call of torch's Python layer, with what to write instead (torch_python.ALTERNATIVES).
WITH_ALTERNATIVE = "{why}; instead, {alternative}"

# ppy-syntax
SYNTAX_CONSTRUCT = "region `{region}`: {what} cannot appear in a region"
SYNTAX_PARSE = "cannot parse: {error}"
# A file Python cannot decode, so cannot import: its bytes, as ppy_check.source reads them.
SYNTAX_UNDECODABLE = ("cannot decode: {bytes} not {encoding} ({reason}); save the file as {encoding}, or "
                      "declare its encoding on line 1 or 2 (`# -*- coding: latin-1 -*-`)")
SYNTAX_ENCODING_DECLARED = ("cannot decode: {problem}; declare an encoding Python knows on line 1 or 2 "
                            "(`# -*- coding: latin-1 -*-`), or save the file as UTF-8 without one")
SYNTAX_DECORATOR = "region `{region}`: {what}"
# What SYNTAX_DECORATOR says is wrong with a ppy decorator
DECORATOR_UNKNOWN_PARAMETER = "`ppy.opt` has no parameter `{name}`"
DECORATOR_COMPILE_NOT_LITERAL = "`ppy.opt` compile must be a literal True or False, not `{value}`"
DECORATOR_LEVELS = "`ppy.opt` takes one level"
DECORATOR_LEVEL_NOT_LITERAL = "`ppy.opt` level must be a literal 0, 1, 2 or 3, not `{value}`"
DECORATOR_PURE_ARGUMENTS = "`ppy.pure` takes no arguments: write `@ppy.pure`"

# The fixes a finding offers (`ppy-check --fix`), as editors list them
FIX_REMOVE_CALL = "remove the call"
FIX_CODE = "`{code}`"
FIX_REMOVE_CODES = "remove {codes} from `{comment}`"
FIX_REMOVE_COMMENT = "remove `{comment}`"

# ppy-unused-ignore
UNUSED_IGNORE_CODE = "region `{region}`: `{code}` in `{comment}` silences nothing on this line; remove it"
UNUSED_IGNORE_ALL = "region `{region}`: `{comment}` silences nothing on this line; remove it"
UNUSED_IGNORE_CODE_OUTSIDE = "`{code}` in `{comment}` silences nothing: this line is in no region; remove it"
UNUSED_IGNORE_ALL_OUTSIDE = "`{comment}` silences nothing: this line is in no region; remove it"
