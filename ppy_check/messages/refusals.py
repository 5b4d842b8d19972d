"""Why the model builder refuses what it refuses: each reason one entry, its rule and its template, whose named
fields the builder fills (``refusals.NAME(field=...)``); ``messages.Message.render`` is the one place they become
text, inside the rule's message (``messages.UNSUPPORTED_CALL``, ``messages.TYPE_PROBLEM``)."""

from __future__ import annotations

from ppy_check.messages import Code, Reason

# ppy-unsupported: `{name}` has no ATen lowering ({why})
DECORATOR_UNDER_PPY = Reason(Code.UNSUPPORTED, "a decorator under `@ppy.opt` changes what the function does, and the"
                                               " compiled code would leave it out; put it above the ppy decorators, "
                                               "or remove it")
READS_MODULE_LEVEL = Reason(Code.UNSUPPORTED, "it reads a module-level value of torch's Python code")
LIBRARY_NOT_STRAIGHT = Reason(Code.UNSUPPORTED, "torch's Python code has `{node}` here, which is not straight-line "
                                                "on what is known here")
LIBRARY_DECIDES = Reason(Code.UNSUPPORTED, "torch's Python code decides on `{test_node}`, which ppy cannot compute")
LIBRARY_LEAVES = Reason(Code.UNSUPPORTED, "torch's Python code leaves a loop (`{jump_node}`) on `{test_node}`, known"
                                          " only at run time")
# What torch's Python code decides at run time (the `shown` of the reasons below), and which value two ways give
LIBRARY_DECIDES_AT_RUN_TIME = Reason(Code.UNSUPPORTED, "torch's Python code decides on `{test}` at run time, and")
LIBRARY_CHOOSES_AT_RUN_TIME = Reason(Code.UNSUPPORTED, "torch's Python code chooses on `{test}` at run time, and")
MERGED_RESULT = Reason(Code.UNSUPPORTED, 'the result')
MERGED_VALUE = Reason(Code.UNSUPPORTED, 'the value')
MERGED_NAME = Reason(Code.UNSUPPORTED, '`{name}`')
RETURNS_ONE_WAY = Reason(Code.UNSUPPORTED, '{shown} returns one way only')
DIFFERENT_FUNCTION_EACH = Reason(Code.UNSUPPORTED, '{shown} `{name}` is a different function each way')
DIFFERENT_FUNCTION_EACH_WAY = Reason(Code.UNSUPPORTED, '{shown} {what} is a different function each way')
ONE_WAY_OTHER = Reason(Code.UNSUPPORTED, '{shown} {what} is a {one_type} one way and a {other_type} the other')
LIBRARY_IMPORTS_RELATIVELY = Reason(Code.UNSUPPORTED, "torch's Python code imports relatively here")
LIBRARY_COUNTS = Reason(Code.UNSUPPORTED, "torch's Python code counts with `range` to a value known only at run time"
                                          " (a tensor's rank, say), so its loop has no fixed length")
LIBRARY_LOOPS = Reason(Code.UNSUPPORTED, "torch's Python code loops over `{node}`, whose length is known only at run"
                                         " time")
LIBRARY_FILTERS = Reason(Code.UNSUPPORTED, "torch's Python code filters on `{condition}`, which is known only at run"
                                           " time")
LIBRARY_COMPUTES = Reason(Code.UNSUPPORTED, "torch's Python code computes `{node}` item by item, and may stop before"
                                            " the items ppy would compute in advance")
OTHER_ARGUMENTS = Reason(Code.UNSUPPORTED, '`{node_func}` with other arguments')
LIBRARY_RAISES = Reason(Code.UNSUPPORTED, "torch's Python code raises here (`{node}`)")
LIBRARY_FAILS = Reason(Code.UNSUPPORTED, "torch's Python code fails `assert {node_test}`")
LIBRARY_DECIDES_KNOWN = Reason(Code.UNSUPPORTED, "torch's Python code decides on `{node_test}`, which is known only "
                                                 "at run time")
LIBRARY_CHECKS_TENSOR_VALUE = Reason(Code.UNSUPPORTED, "torch's Python code checks `{test}`, which reads a tensor's "
                                                       "value back into Python")
LIBRARY_CHECKS_UNKNOWN = Reason(Code.UNSUPPORTED, "torch's Python code checks `{test}`, which is not a value ppy "
                                                  "computes")
LIBRARY_IMPORTS_UNFOLLOWED = Reason(Code.UNSUPPORTED, "torch's Python code imports `{dotted}`: {why}")
LIBRARY_IMPORTS = Reason(Code.UNSUPPORTED, "torch's Python code imports `{dotted}`, which ppy does not follow")
LIBRARY_RAISES_SAYING = Reason(Code.UNSUPPORTED, "torch's Python code raises {error} here ({text})")
LIBRARY_RAISES_ERROR = Reason(Code.UNSUPPORTED, "torch's Python code raises {error} here")
MODULE_FUNCTION_VALUE = Reason(Code.UNSUPPORTED, 'a module or function is not a value a region can hold')
STARRED_TARGET_MUST = Reason(Code.UNSUPPORTED, 'a starred target must be inside a tuple')
ASSIGNING_ATTRIBUTE_CHANGES = Reason(Code.UNSUPPORTED, "assigning to an attribute changes an object outside the "
                                                       "region")
TWO_STARRED_TARGETS = Reason(Code.UNSUPPORTED, 'two starred targets')
HAVE_NO_REGION = Reason(Code.UNSUPPORTED, '{kind} have no region type')
NO_REGION_TYPE = Reason(Code.UNSUPPORTED, '{kind} has no region type; regions pass tuples')
UNPACKING_BELONGS_CALL = Reason(Code.UNSUPPORTED, '`*` unpacking belongs in a call or a tuple')
SLICE_BELONGS_INSIDE = Reason(Code.UNSUPPORTED, 'a slice belongs inside `[]`')
TYPE_TEST_ARGUMENTS = Reason(Code.UNSUPPORTED, "a region answers `isinstance(value, classes)` and "
                                               "`torch.is_tensor(value)` from the types, with these arguments only")
TYPE_TEST_UNANSWERED = Reason(Code.UNSUPPORTED, "the type of `{value}` (`{type}`) does not answer it (a `float` "
                                                "parameter may hold an int, an Optional may be None); test in the "
                                                "caller")
TYPE_TEST_NOT_VALUE = Reason(Code.UNSUPPORTED, "`{value}` is a module or a function, not a value of a region")
F_STRING_BUILDS = Reason(Code.UNSUPPORTED, 'an f-string builds its text at run time; pass the string as a parameter')
VALUE_REGION_READ = Reason(Code.UNSUPPORTED, 'not a value a region can read')
MUST_LITERAL = Reason(Code.UNSUPPORTED, '`{chooser_arg_name}` must be a literal here: it picks which of two of '
                                        "torch's functions runs, and they return different things; write "
                                        '`{chooser_arg_name}=True` or `{chooser_arg_name}=False`')
TORCH_BOOLEAN_DISPATCH = Reason(Code.UNSUPPORTED, "torch's `boolean_dispatch` names a function ppy cannot follow")
ISINSTANCE_OTHER_THAN = Reason(Code.UNSUPPORTED, '`isinstance` with other than two arguments')
ISINSTANCE_OTHER_THAN_2 = Reason(Code.UNSUPPORTED, '`{node}`')
LIBRARY_TESTS = Reason(Code.UNSUPPORTED, "torch's Python code tests `{node}`, which ppy cannot tell here")
ATTRIBUTE_FUNCTION = Reason(Code.UNSUPPORTED, 'an attribute of a function')
DTYPE_PROPERTIES_COMPILED = Reason(Code.UNSUPPORTED, 'dtype properties are not compiled yet')
DTYPE_PROPERTIES_COMPILED_2 = Reason(Code.UNSUPPORTED, 'an attribute of a {type}')
TORCH_IINFO_ANYTHING = Reason(Code.UNSUPPORTED, '`torch.iinfo` of anything but one dtype')
TORCH_FINFO_ANYTHING = Reason(Code.UNSUPPORTED, '`torch.finfo` of anything but one dtype')
TENSOR_PROPERTY_PPY = Reason(Code.UNSUPPORTED, 'a tensor property ppy does not compile')
TENSOR_METHOD_CALL = Reason(Code.UNSUPPORTED, '`Tensor.{attr}` is a method: call it')
TENSOR_ATTRIBUTE_PPY = Reason(Code.UNSUPPORTED, 'not a tensor attribute ppy can compile')
READS_TENSOR_VALUE = Reason(Code.UNSUPPORTED, "`not` reads the tensor's value back into Python; use "
                                              "`torch.logical_not`")
READS_TENSOR_VALUE_2 = Reason(Code.UNSUPPORTED, '`not` of a {operand_type}')
LIBRARY_TESTS_MEMBERSHIP = Reason(Code.UNSUPPORTED, "torch's Python code tests membership in `{node}`, a set ppy "
                                                    "cannot build")
LIBRARY_TESTS_IDENTITY = Reason(Code.UNSUPPORTED, "torch's Python code tests `{text}`, the identity of Python "
                                                  "objects, which ppy cannot tell here")
READS_VALUES_BACK = Reason(Code.UNSUPPORTED, '`in` here reads values back into Python')
METHOD_TENSOR = Reason(Code.UNSUPPORTED, 'a method of `{callee_name}`, which is not a tensor')
PYTHON_CLASS_OF = Reason(Code.UNSUPPORTED, "`type()` asks for an object's Python class, which compiled code does "
                                           "not hold (torch's Python code may show it in an error message)")
PYTHON_BUILTIN_RUNS = Reason(Code.UNSUPPORTED, 'a Python builtin, which runs in the interpreter')
FUNCTION_PPY_FOLLOW = Reason(Code.UNSUPPORTED, 'not a function of `{callee_dotted}` ppy can follow')
LIBRARY_NOT_FOLLOWED_SHAPES = Reason(Code.UNSUPPORTED, "`{shown}` of something other than shapes (ints, tuples of "
                                                       "ints, torch.Size)")
NOT_CALLABLE = Reason(Code.UNSUPPORTED, "`{shown}` is not a function a region can call")
NONE_RUN_WITH_STEP = Reason(Code.UNSUPPORTED, "an index joining `(None,) * n` with a slice whose step is known only at"
                                              " run time; index in two steps, the slice first")
FUNCTOOLS_OTHER = Reason(Code.UNSUPPORTED, "of `functools`, a region calls `reduce` and `partial`, over functions and"
                                           " tuples known where it is built")
OPERATOR_OTHER = Reason(Code.UNSUPPORTED, "of `operator`, a region calls the binary operators (`operator.add`, "
                                          "`operator.mul`, ...); write the operation itself")
REDUCE_RUN_TIME_LENGTH = Reason(Code.UNSUPPORTED, "it reduces `{type}`, whose length is known only at run time, so "
                                                  "it makes no fixed number of calls; reduce a tuple written out, or "
                                                  "take `math.prod(...)` of a shape")
MODULE_CANNOT_CALLED = Reason(Code.UNSUPPORTED, 'a module cannot be called')
MODULE_CANNOT_CALLED_2 = Reason(Code.UNSUPPORTED, '`{shown}` is a {callee_type}, not a function')
LIBRARY_CALLS = Reason(Code.UNSUPPORTED, "torch's Python code calls `{node_func}`, which ppy cannot follow")
LIBRARY_CALLS_PPY = Reason(Code.UNSUPPORTED, "torch's Python code calls `{func}`, which ppy cannot follow")
ANYTHING_DICT_LITERAL = Reason(Code.UNSUPPORTED, '`**` of anything but a dict of literal keys')
TORCH_OPERATOR_C = Reason(Code.UNSUPPORTED, '`{namespace}.{name}` is not a torch operator with a C++ API')
TORCH_OPERATOR_C_API = Reason(Code.UNSUPPORTED, '`{dotted}` is not a torch operator with a C++ API')
PPY_OWN_API = Reason(Code.UNSUPPORTED, "ppy's own API cannot be called inside a region")
CLASS_LINE = Reason(Code.UNSUPPORTED, 'a class (line {line})')
TORCH_TORCH_OPERATORS = Reason(Code.UNSUPPORTED, '`{root}` is not torch; only torch operators lower to ATen')
REGION_SEQUENCES_DO = Reason(Code.UNSUPPORTED, "a region's sequences do not change in place; build a new tuple "
                                               "(`items = (*items, x)`)")
REGION_SEQUENCES_DO_2 = Reason(Code.UNSUPPORTED, 'a method of a {kind}')
TENSOR_TENSOR_METHOD = Reason(Code.UNSUPPORTED, '`Tensor.{name}` is not a tensor method with a C++ API')
TENSOR_DIM_TAKES_2 = Reason(Code.UNSUPPORTED, '`{name}()` with `*` or keywords')
MIN_OF_TENSORS = Reason(Code.UNSUPPORTED, "`{name}()` of tensors compares their values in Python; use "
                                          "`torch.minimum`")
MAX_OF_TENSORS = Reason(Code.UNSUPPORTED, "`{name}()` of tensors compares their values in Python; use "
                                          "`torch.maximum`")
CONVERSION_READS_TENSOR = Reason(Code.UNSUPPORTED, "`{name}()` of a {type} reads its value back into Python; use "
                                                   "`.to()`")
CONVERSION_OF_SEQUENCE = Reason(Code.UNSUPPORTED, '`{name}()` of a {type}')
ITEM_ASSIGNMENT_OUTSIDE = Reason(Code.UNSUPPORTED, "item assignment into a {type} changes an object outside the "
                                                   "region")
TUPLES_CANNOT_CHANGE = Reason(Code.UNSUPPORTED, 'tuples cannot change')
# torch_python.NOT_FOLLOWED says, per function, why ppy does not follow it
NOT_FOLLOWED = Reason(Code.UNSUPPORTED, '{why}')
ITEMS_MORE_THAN = Reason(Code.UNSUPPORTED, '`{shown}` has {budgets_shown_int} items, more than ppy unrolls')
LIBRARY_TAKES = Reason(Code.UNSUPPORTED, "torch's Python code takes `{name}` of a sequence whose length is known "
                                         "only at run time (a tensor's rank, say)")
LIBRARY_SORTS = Reason(Code.UNSUPPORTED, "torch's Python code sorts values known only at run time (dims counted from"
                                         " a tensor's rank, say), so their order is not known where the region is "
                                         "built")
BOOL_NUMBER_BOOL = Reason(Code.UNSUPPORTED, "`{name}()` of a bool and a number is a bool or not by their values; "
                                            "convert the bool with `int()`")
MATH_COMPILED = Reason(Code.UNSUPPORTED, '`math.{name}` is not compiled')
NO_ATEN_LOWERING = Reason(Code.UNSUPPORTED, '`{name}` has no ATen lowering')
RETURNS_REGION_CANNOT = Reason(Code.UNSUPPORTED, 'it returns a {returned_type}, which a region cannot hold')
DEFAULT_VALUE_PPY = Reason(Code.UNSUPPORTED, 'the default of `{name}` (`{defaults}`) is not a value ppy computes')
LIBRARY_TESTS_PPY = Reason(Code.UNSUPPORTED, "torch's Python code tests `{operand}`, which ppy cannot compute")
LIBRARY_TESTS_WHOSE = Reason(Code.UNSUPPORTED, "torch's Python code tests `{node}`, whose later parts Python might "
                                               "not run")
LIBRARY_CHOOSES = Reason(Code.UNSUPPORTED, "torch's Python code chooses on `{node_test}`, which ppy cannot compute")
DECORATED_PPY_CANNOT = Reason(Code.UNSUPPORTED, "`{node_name}` is decorated with `{decorator}`, which ppy cannot see"
                                                " through")
DECORATED_PPY_CANNOT_2 = Reason(Code.UNSUPPORTED, '`{node_name}` takes `**{node_args_kwarg_arg}`')
LIBRARY_CALLS_FUNCTION = Reason(Code.UNSUPPORTED, "torch's Python code calls `{node_name}`, a function defined in "
                                                  "another function, from outside it")
DEFAULT_LITERAL = Reason(Code.UNSUPPORTED, '`{node_name}` has a default that is not a literal (`{default}`)')
REARRANGE_REPEAT_REDUCE = Reason(Code.UNSUPPORTED, "only `rearrange`, `repeat` and `reduce` of einops, without `*` "
                                                   "arguments")
PATTERN_MUST_LITERAL = Reason(Code.UNSUPPORTED, 'the pattern must be a literal string')
REDUCTION_MUST_ONE = Reason(Code.UNSUPPORTED, 'the reduction must be one of {reductions}, as a literal')
LENGTH_MUST_INT_2 = Reason(Code.UNSUPPORTED, 'pattern {pattern_value!r}: {error}')

# Why a tensor method (HOST_READING_METHODS) or property (PROPERTY_REFUSALS) has no C++ form
METHOD_READS_VALUE_BACK = Reason(Code.UNSUPPORTED, 'it reads a value back into Python')
METHOD_BUILDS_LIST = Reason(Code.UNSUPPORTED, 'it builds a Python list')
METHOD_RUNS_NUMPY = Reason(Code.UNSUPPORTED, "numpy runs outside torch's dispatcher")
METHOD_RUNS_AUTOGRAD = Reason(Code.UNSUPPORTED, 'autograd runs outside the region')
METHOD_READS_ADDRESS = Reason(Code.UNSUPPORTED, 'it reads a raw address')
METHOD_REGISTERS_HOOK = Reason(Code.UNSUPPORTED, 'hooks are Python callbacks')
METHOD_HANDS_DATA_TO_NUMPY = Reason(Code.UNSUPPORTED, 'it hands the data to numpy')
METHOD_IS_NUMPY_PROTOCOL = Reason(Code.UNSUPPORTED, "it is numpy's protocol")
METHOD_COPIES_OBJECT = Reason(Code.UNSUPPORTED, 'it copies the Python object; use `.clone()`')
METHOD_LISTS_ATTRIBUTES = Reason(Code.UNSUPPORTED, "it lists the Python object's attributes")
METHOD_HANDS_DATA_ELSEWHERE = Reason(Code.UNSUPPORTED, 'it hands the data to another library')
METHOD_FORMATS_TEXT = Reason(Code.UNSUPPORTED, 'it formats the tensor as text')
METHOD_IS_IDENTITY = Reason(Code.UNSUPPORTED, "it is the Python object's identity")
METHOD_PICKLES = Reason(Code.UNSUPPORTED, 'pickling runs outside the region')
METHOD_READS_LAYOUT = Reason(Code.UNSUPPORTED, 'it reads the memory layout into Python')
METHOD_READS_STORAGE_PLACE = Reason(Code.UNSUPPORTED, 'it reads where the storage lives')
METHOD_SHARES_STORAGE = Reason(Code.UNSUPPORTED, 'it moves the storage to shared memory')
METHOD_HANDS_OUT_STORAGE = Reason(Code.UNSUPPORTED, 'it hands out the storage object')
METHOD_NAMES_STORAGE_CLASS = Reason(Code.UNSUPPORTED, "it names the storage's Python class")
METHOD_LOADS_STATE_DICT = Reason(Code.UNSUPPORTED, 'it loads a state dict into a module')
METHOD_READS_OFFSET = Reason(Code.UNSUPPORTED, 'it reads a raw offset')
PROPERTY_READS_GRADIENT = Reason(Code.UNSUPPORTED, 'gradients are read outside the region')
PROPERTY_READS_AUTOGRAD_GRAPH = Reason(Code.UNSUPPORTED, "autograd's graph is read outside the region")

# ppy-type: `{subject}`: {why}
ENDS_WITHOUT_RETURN = Reason(Code.TYPE, 'it ends without `return` (so returns None), but is annotated `-> {returns}`')
LIST_TAKES_ONE = Reason(Code.TYPE, '`list.{func_attr}` takes one argument')
LIST_EXTEND = Reason(Code.TYPE, '`list.extend` of a {type}')
INT_DOES_FIT = Reason(Code.TYPE, "the int does not fit in the 64 bits torch takes (Python would raise OverflowError "
                                 "when torch receives it)")
UNPACKS_VALUES_INTO = Reason(Code.TYPE, 'unpacks {items_count} values into at least {count} names')
UNPACKS_VALUES_INTO_NAMES = Reason(Code.TYPE, "unpacks {items_count} values into {count} names (Python raises "
                                              "ValueError)")
CANNOT_UNPACK = Reason(Code.TYPE, 'cannot unpack a {source_type}')
CANNOT_STORE_INTO = Reason(Code.TYPE, 'cannot store a {item_type} into a tensor')
RETURNS_ANNOTATED_NONE = Reason(Code.TYPE, 'returns a {type} but is annotated `-> None`')
RETURNS_NONE_ANNOTATED = Reason(Code.TYPE, 'returns None but is annotated `-> {declared}`')
RETURNS_WHERE_WAS = Reason(Code.TYPE, 'returns a {type} where `-> {declared}` was declared')
RETURNS_BOOL_AS_INT = Reason(Code.TYPE, 'returns a {type} where `-> {declared}` was declared (the compiled region '
                                        'would hand back 1 for True; declare `-> bool` or convert with `int()`)')
USED_BEFORE_ASSIGNED = Reason(Code.TYPE, '`{name}` is used before it is assigned (Python raises UnboundLocalError)')
TAKES_ONE_ARGUMENT = Reason(Code.TYPE, 'takes one argument')
CANNOT_INDEXED = Reason(Code.TYPE, 'a {kind} cannot be indexed')
SLICE_BOUNDS_MUST = Reason(Code.TYPE, 'slice bounds must be ints, not {bound_type}')
ALWAYS_RAISES_VALUEERROR = Reason(Code.TYPE, 'always raises ValueError ({error})')
TUPLE_MIXED_TYPES = Reason(Code.TYPE, 'a tuple of mixed types sliced by run-time bounds')
SEQUENCE_INDEX_MUST = Reason(Code.TYPE, 'a sequence index must be an int, not {index_type}')
INDEX_OUT_RANGE = Reason(Code.TYPE, "index {position} is out of range for a tuple of {kind_items_count} (Python "
                                    "raises IndexError)")
TUPLE_MIXED_TYPES_INDEXED = Reason(Code.TYPE, 'a tuple of mixed types indexed at run time')
SLICE_BOUNDS_MUST_INTS = Reason(Code.TYPE, 'slice bounds must be ints, not {type}')
CANNOT_INDEX_TENSOR = Reason(Code.TYPE, 'cannot index a tensor with a {type}')
INDEX_LIST_MUST = Reason(Code.TYPE, 'an index list must hold ints (or bools)')
INDEX_LIST_MUST_2 = Reason(Code.TYPE, '`*` of a {atom_type}')
JOINS_TUPLES_MIXED = Reason(Code.TYPE, 'joins tuples of mixed item types at run time')
DOES_TAKE = Reason(Code.TYPE, '`{operator_names}` does not take a {left_type} and a {right_type}')
ALWAYS_RAISES = Reason(Code.TYPE, 'always raises {error_type} ({error})')
REDUCE_TAKES = Reason(Code.TYPE, 'takes a function, a tuple and an optional initial value')
PARTIAL_TAKES = Reason(Code.TYPE, 'takes the function first')
REDUCE_EMPTY = Reason(Code.TYPE, 'always raises TypeError (reduce() of empty iterable with no initial value)')
OPERATOR_TAKES_TWO = Reason(Code.TYPE, 'takes two arguments')
# What each of the four below does with a `Sequence[...]` parameter, and why that is refused.
_TELLS_LIST_FROM_TUPLE = (" a `Sequence[{item}]` parameter tells a list from a tuple (the caller may pass either, and "
                          "Python's answer differs); annotate it `tuple[{item}, ...]`")
SEQUENCE_SLICED = Reason(Code.TYPE, "slicing" + _TELLS_LIST_FROM_TUPLE)
SEQUENCE_OPERATOR = Reason(Code.TYPE, "`{symbol}` on" + _TELLS_LIST_FROM_TUPLE)
SEQUENCE_COMPARED = Reason(Code.TYPE, "comparing" + _TELLS_LIST_FROM_TUPLE)
SEQUENCE_RETURNED = Reason(Code.TYPE, "returning" + _TELLS_LIST_FROM_TUPLE)
TUPLE_REPEATED = Reason(Code.TYPE, 'a tuple repeated by a {count_type}')
TUPLE_MIXED_TYPES_REPEATED = Reason(Code.TYPE, 'a tuple of mixed types repeated a run-time number of times')
DOES_TAKE_2 = Reason(Code.TYPE, '`{symbol}=` does not take a {left_type} and a {right_type}')
LEFT_TENSOR = Reason(Code.TYPE, 'a {left_type} on the left of `{symbol}` with a tensor')
COMPARES_IDENTITY_NONE = Reason(Code.TYPE, '`is` compares identity; only `is None` has a meaning in a region')
KEYWORD_ARGUMENT_GIVEN = Reason(Code.TYPE, 'keyword argument `{key}` is given twice')
TENSOR_PROPERTY_METHOD = Reason(Code.TYPE, "`Tensor.{name}` is a property, not a method: write `{node_func}` without"
                                           " the call")
UNPACKING_INTO_TENSOR = Reason(Code.TYPE, '`*` unpacking into a tensor query')
TENSOR_TAKES_ONE_DIM = Reason(Code.TYPE, '`Tensor.{name}` takes one optional dim')
TENSOR_TAKES_NOTHING = Reason(Code.TYPE, '`Tensor.{name}` takes no arguments')
TENSOR_DIM_TAKES = Reason(Code.TYPE, '`Tensor.{name}(dim)` takes an int, not a {given_type}')
FLOAT_RAISES_VALUEERROR = Reason(Code.TYPE, 'float({value_value!r}) raises ValueError')
ROUND_DIGITS_MUST = Reason(Code.TYPE, "round()'s digits must be an int")
BOOL_NUMBER_BOOL_2 = Reason(Code.TYPE, '`{name}()` of a {type}')
MATH_TAKES_ARGUMENT = Reason(Code.TYPE, '`math.{name}` takes {arity} argument')
MATH_TAKES_ARGUMENTS = Reason(Code.TYPE, '`math.{name}` takes {arity} arguments')
EINOPS_ARGUMENTS = Reason(Code.TYPE, '`einops.{name}` takes a tensor and a pattern')
EINOPS_REDUCE_ARGUMENTS = Reason(Code.TYPE, '`einops.{name}` takes a tensor and a pattern and a reduction')
# hostmath.HostTypeError says what Python's operator would raise
HOST_TYPE_ERROR = Reason(Code.TYPE, '{error}')
MATH_TAKES_NUMBERS = Reason(Code.TYPE, '`math.{name}` takes numbers, not a {type}')
MATH_TAKES_INTS = Reason(Code.TYPE, '`math.{name}` takes ints')
NO_OVERLOAD_TAKES = Reason(Code.TYPE, 'no overload of `{name}` takes {args}; torch has {tried}')
EVERY_POSITIONAL_ARGUMENT = Reason(Code.TYPE, "every positional argument of `{name}` is a `*` spread of run-time "
                                              "length, and when it spreads nothing torch calls `{name}` with no "
                                              "argument, another overload; pass the tuple itself, without `*`")
ARGUMENT_MAY_NONE = Reason(Code.TYPE, "an argument may be None, and torch would then call another overload of "
                                      "`{shown}`; decide in the caller")
SEQUENCE_WHOSE_LENGTH = Reason(Code.TYPE, '`*` of a sequence whose length is known only at run time')
TAKES_MOST_POSITIONAL = Reason(Code.TYPE, "takes at most {positional_names_count} positional arguments "
                                          "({values_count} given)")
GOT_UNEXPECTED_KEYWORD = Reason(Code.TYPE, 'got an unexpected keyword argument `{key}`')
GOT_MULTIPLE_VALUES = Reason(Code.TYPE, 'got multiple values for argument `{key}`')
MISSING_REQUIRED_ARGUMENT = Reason(Code.TYPE, 'missing a required argument: `{name}`')
# Python's own binding of a call to a function's parameters, refused: what mypy reports too (its `call-arg`) where
# it checks the call, so the mypy plugin leaves those to mypy.
BINDING = (TAKES_MOST_POSITIONAL, GOT_UNEXPECTED_KEYWORD, GOT_MULTIPLE_VALUES, MISSING_REQUIRED_ARGUMENT)
CALLS_ITSELF_RECURSION = Reason(Code.TYPE, '`{node_name}` calls itself (recursion has no straight-line form)')
LENGTH_MUST_INT = Reason(Code.TYPE, 'the length `{key}=` must be an int, not a {type}')

# ppy-type, for what a module region reads through `self` (the subject is the attribute path as written)
ATTRIBUTE_OUTSIDE_INIT = Reason(Code.TYPE, "`{name}` is assigned outside `__init__`, so what it holds may change "
                                           "between calls; assign it in `__init__`, or declare it in the class body "
                                           "(`{name}: torch.Tensor`)")
ATTRIBUTE_IN_LOOP = Reason(Code.TYPE, "`{name}` is assigned in a loop of `__init__`, so the checker cannot tell what "
                                      "it holds; declare it in the class body (`{name}: int`)")
ATTRIBUTE_ON_ONE_WAY = Reason(Code.TYPE, "`{name}` is assigned on one way of an `if` in `__init__` only, so an "
                                         "instance may lack it; assign it on both ways (None on the other makes it "
                                         "Optional)")
ATTRIBUTE_KINDS_DIFFER = Reason(Code.TYPE, "`{name}` holds `{first}` on one way of `__init__` and `{second}` on the "
                                           "other, which no region type holds; make both ways one kind")
ATTRIBUTE_KIND_UNKNOWN = Reason(Code.TYPE, "the checker cannot tell what `{name}` holds (`__init__` assigns it "
                                           "`{value}`); annotate the `__init__` parameter it comes from, or declare it "
                                           "in the class body (`{name}: {example}`)")
SEQUENTIAL_NAMED = Reason(Code.TYPE, "`{name}` is a Sequential of named modules (`{value}`), which ppy does not read; "
                                     "build it from its modules in order (`nn.Sequential(nn.Linear(...), ...)`), or "
                                     "make the named ones attributes of their own")
ATTRIBUTE_CONTAINER_PASSED = Reason(Code.TYPE, "`{name}` holds the `{cls}` passed to `__init__` as `{param}`, so "
                                               "the checker cannot see which modules it holds; build it in "
                                               "`__init__` from modules ppy reads (`self.{name} = nn.{cls}(...)`)"
                                               ", or call it outside the region")
ATTRIBUTE_OPTIONAL_MODULE = Reason(Code.TYPE, "`{name}` holds `__init__`'s `{param}: {annotation}`, a submodule that "
                                              "may be None, which a region cannot call without a branch; give it a "
                                              "module that leaves the input as it is instead of None (`nn.Identity()`)"
                                              ", or write two regions")
ATTRIBUTE_ANNOTATION_UNREAD = Reason(Code.TYPE, "`{name}` is declared `{annotation}`, which is no region type and no "
                                                "module class ppy reads")
ATTRIBUTE_CLASS_UNREAD = Reason(Code.TYPE, "its class `{name}` is not one ppy reads (torch.nn's modules ppy inlines "
                                           "and the classes of the region's own file are); call it outside the region"
                                           ", or declare the attribute in the class body")
# The class reader's own reason (classes.UnknownField, one of the entries above), where a region reads the attribute.
ATTRIBUTE_UNSETTLED = Reason(Code.TYPE, "{why}")
ATTRIBUTE_NOT_ASSIGNED = Reason(Code.TYPE, "`{cls}` assigns no attribute `{name}` in `__init__` and declares none in "
                                           "its body; assign it there, or declare it (`{name}: torch.Tensor`)")
ATTRIBUTE_OF_UNREAD_BASE = Reason(Code.TYPE, "`{cls}` assigns no attribute `{name}` itself, and derives from `{base}`,"
                                             " which ppy cannot read; declare it in the class body (`{name}: "
                                             "torch.Tensor`)")
ATTRIBUTE_NOT_CALLABLE = Reason(Code.TYPE, "it holds `{type}`, which is not callable")
MODULE_NOT_VALUE = Reason(Code.TYPE, "a module (`{cls}`) is not a value a region can hold or return; call it, or "
                                     "read its tensors")
METHOD_NOT_VALUE = Reason(Code.TYPE, "it is a method of `{cls}`, which a region calls (`{path}(...)`) but cannot "
                                     "hold or return")
PROPERTY_NOT_READ = Reason(Code.TYPE, "it is a property of `{cls}`, whose getter a region does not run; read the "
                                      "attributes it computes from instead")
MODULE_NOT_INDEXED = Reason(Code.TYPE, "`{cls}` is not a container ppy indexes (Sequential, ModuleList, ModuleDict)")
CONTAINER_KEY_LITERAL = Reason(Code.TYPE, "an item of a `{cls}` is reached by a literal index (`[0]`, `[-1]`, "
                                          "`[\"name\"]`, a name an attribute may have), so the build knows which "
                                          "module it inlines")
CONTAINER_NO_KEY = Reason(Code.TYPE, "the `{cls}` `__init__` builds has no item {key}")
CONTAINER_OUT_OF_RANGE = Reason(Code.TYPE, "the `{cls}` `__init__` builds has {count} items")
CONTAINER_NEGATIVE_UNKNOWN = Reason(Code.TYPE, "the `{cls}` is built by a comprehension, so how many items it has is "
                                               "known only at run time; index it from the front")
SEQUENTIAL_ONE_ARGUMENT = Reason(Code.TYPE, "a Sequential is called with one positional argument")
SUPER_METHOD_UNREAD = Reason(Code.TYPE, "no base class of `{cls}` that ppy reads defines `{name}`")
MODULE_NO_FORWARD = Reason(Code.TYPE, "`{cls}` has no `forward` ppy reads")
