// The bridge: what every region module shares and is not worth compiling per module, built once per torch
// version and compiler into ppy_bridge.so (ppy_compile/shared.py, BRIDGE); no other file includes it. Region
// modules declare its few functions (ppy_bridge.h) and link against it. It holds the way to torch's Python
// objects (tensors, devices, dtypes), binding a call's arguments as Python would, the traceback frame of a
// statement that raised, a method region's reads through its instance, and its own Python module (called once
// per region, never per call).
//
// It includes torch's light Python headers (Device.h, Dtype.h, DynamicTypes.h) and declares the rest of what it
// uses of libtorch_python below, as torch's own functorch does (functorch/csrc/dim/python_variable_simple.h):
// torch/csrc/autograd/python_variable.h, Size.h and Exceptions.h pull in pybind11 and autograd, and parsing them
// was four fifths of the bridge's build (some 16 s of 20 here), which a new machine's first compiled result
// waited for.

// Its own declarations first: the compiler then checks each definition below against what modules call.
#include "ppy_bridge.h"
#include <frameobject.h>
#include <cstdio>
#include <exception>
#include <vector>
#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/EmptyTensor.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/autograd/forward_grad.h>

// libtorch_python's exports, declared as its headers declare them. A function's mangled name carries its
// parameter types, so a declaration torch no longer matches fails the bridge's load, never a call.
TORCH_PYTHON_API extern PyObject* THPVariableClass;  // torch.Tensor
TORCH_PYTHON_API extern PyObject* ParameterClass;    // torch.nn.Parameter
TORCH_PYTHON_API extern PyTypeObject THPSizeType;    // torch.Size
TORCH_PYTHON_API PyObject* THPVariable_Wrap(const at::TensorBase& var);
namespace torch {
TORCH_PYTHON_API void translate_exception_to_python(const std::exception_ptr&);
}

namespace ppy_bridge {

// A torch.Tensor's Python object, as torch lays it out (THPVariable): the object header, then the tensor.
// That one fact the bridge assumes rather than includes; `tensor_layout_holds` checks it against tensors
// torch itself wraps when the bridge loads, and a torch that lays its tensors out otherwise (older
// releases held a c10::MaybeOwned<at::Tensor> there) gets a bridge that refuses to load, saying why.
struct TensorObject {
    PyObject_HEAD
    at::Tensor cdata;
};

static const at::Tensor& tensor_of(PyObject* object) {
    return reinterpret_cast<TensorObject*>(object)->cdata;
}

// torch.Tensor or torch.nn.Parameter exactly: what C++ takes as it is (Parameter is Python bookkeeping).
static bool exact_tensor(PyObject* object) {
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
    return type == THPVariableClass || type == ParameterClass;
}

static bool is_tensor(PyObject* object) {
    if (THPVariableClass == nullptr) return false;
    if (exact_tensor(object)) return true;
    int found = PyObject_IsInstance(object, THPVariableClass);
    if (found < 0) PyErr_Clear();  // an __instancecheck__ that raised: the Python body meets it again
    return found > 0;
}

bool unpack_tensor(PyObject* object, at::Tensor& out) {
    if (!is_tensor(object)) return false;
    out = tensor_of(object);
    return true;
}

// The tensor a Python object holds, without a reference count: valid while the object lives.
const at::Tensor* borrow_tensor(PyObject* object) {
    return is_tensor(object) ? &tensor_of(object) : nullptr;
}

// Only a plain, strided Tensor (or Parameter) whose torch functions reach ATen unchanged: a subclass
// with its own __torch_function__, or an active torch function mode, changes what the Python body
// computes, and the model folds torch's Python code's decisions on a parameter's layout as strided
// (a sparse tensor takes other ways there), so for any of them the caller runs the body instead.
// torch.nn.Parameter is the one tensor subclass ATen may take as it is: its __torch_function__ is torch's own
// disabled one, so a call on it does what a call on its data does (and a module region reads its weights as such).
const at::Tensor* borrow_plain_tensor(PyObject* object) {
    if (THPVariableClass == nullptr || !exact_tensor(object) || at::impl::torch_function_mode_enabled())
        return nullptr;
    const at::Tensor& tensor = tensor_of(object);
    return tensor.layout() == at::kStrided ? &tensor : nullptr;
}

// Whether TensorObject is torch's layout: two tensors made here, wrapped by torch, are found where the bridge
// reads them. Only the objects' own bytes are read (a pointer compared, never followed), whatever the layout.
// The tensors are made by the CPU allocator itself, not through the dispatcher: the bridge loads at a region's
// first call, which may run under a dispatch mode (FakeTensorMode in torch.export) that would make a fake one.
static bool tensor_layout_holds() {
    if (THPVariableClass == nullptr || !PyType_Check(THPVariableClass) ||
        reinterpret_cast<PyTypeObject*>(THPVariableClass)->tp_basicsize < static_cast<Py_ssize_t>(sizeof(TensorObject)))
        return false;
    for (int64_t length : {0, 3}) {
        at::TensorBase made = at::detail::empty_cpu({length}, at::kFloat);
        PyObject* wrapped = THPVariable_Wrap(made);
        if (wrapped == nullptr) return false;
        bool holds = exact_tensor(wrapped) &&
                     reinterpret_cast<TensorObject*>(wrapped)->cdata.unsafeGetTensorImpl() == made.unsafeGetTensorImpl();
        Py_DECREF(wrapped);
        if (!holds) return false;
    }
    return true;
}

bool unpack_device(PyObject* object, at::Device& out) {
    if (!THPDevice_Check(object)) return false;
    out = reinterpret_cast<THPDevice*>(object)->device;
    return true;
}

PyObject* wrap_device(const at::Device& device) {
    return THPDevice_New(device);
}

PyObject* wrap_tensor(const at::Tensor& tensor) {
    return THPVariable_Wrap(tensor);
}

bool unpack_dtype(PyObject* object, at::ScalarType& out) {
    if (!THPDtype_Check(object)) return false;
    out = reinterpret_cast<THPDtype*>(object)->scalar_type;
    return true;
}

PyObject* wrap_dtype(at::ScalarType dtype) {
    PyObject* object = reinterpret_cast<PyObject*>(torch::getTHPDtype(dtype));
    Py_INCREF(object);
    return object;
}

// Translate the exception being handled into the Python exception torch's own
// bindings would raise (RuntimeError, IndexError, TypeError, torch.OutOfMemoryError...).
PyObject* raise_current() {
    try {
        torch::translate_exception_to_python(std::current_exception());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception in a ppy region");
    }
    return nullptr;
}

// Forward-mode AD keeps its tangents per level, and only level 0 can be entered
// (torch's own kernels look no further): no level, no tangent on any tensor.
bool forward_ad_active() {
    return torch::autograd::ForwardADLevel::try_get_by_idx(0) != nullptr;
}

bool is_size(PyObject* object) {
    return Py_TYPE(object) == &THPSizeType;  // torch's own type object: not a tuple subclass that took its name
}

// --- the call of a region object -----------------------------------------------------------
// A region's entry runs with `self` its module, or a context ppy.runtime made for the region. A
// context that binds is the region object's own __call__: Python's binding rules, and the region's
// Python call path (Region.__call__) for anything the entry does not take as it is. Otherwise
// (the module, or the context of `region.compiled`) every parameter comes positionally and an
// argument not exactly its type answers NotImplemented: the caller runs the Python body.
enum Context {
    PYTHON_BODY, BINDS, SLOW_CALL, NAMES, POSITIONAL, POSITIONAL_ONLY, DEFAULTS, REQUIRED, GUARDS, REBOUND, CONTEXT_SIZE
};

static bool is_context(PyObject* self) {
    return PyTuple_CheckExact(self) && PyTuple_GET_SIZE(self) == CONTEXT_SIZE;
}

static bool binds(PyObject* self) {
    return is_context(self) && PyTuple_GET_ITEM(self, BINDS) == Py_True;
}

// 1: `out` holds every parameter's argument (borrowed) in order; 0: the region's own Python call
// must answer (a binding error, said as Python says it); -1: an exception is set.
int bind(PyObject* self, const char* region, PyObject* const* args, size_t nargsf, PyObject* kwnames,
         Py_ssize_t count, PyObject** out) {
    Py_ssize_t given = PyVectorcall_NARGS(nargsf);
    if (!binds(self)) {
        if ((kwnames == nullptr || PyTuple_GET_SIZE(kwnames) == 0) && given == count) {
            std::copy(args, args + count, out);
            return 1;
        }
        if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
            PyErr_Format(PyExc_TypeError, "region `%s`: its compiled function takes positional arguments only", region);
        } else {
            PyErr_Format(PyExc_TypeError, "region `%s` takes %zd arguments, got %zd", region, count, given);
        }
        return -1;
    }
    PyObject* names = PyTuple_GET_ITEM(self, NAMES);
    Py_ssize_t positional = PyLong_AsSsize_t(PyTuple_GET_ITEM(self, POSITIONAL));
    Py_ssize_t positional_only = PyLong_AsSsize_t(PyTuple_GET_ITEM(self, POSITIONAL_ONLY));
    if (positional < 0 || positional_only < 0) return PyErr_Occurred() ? -1 : 0;
    if (given > positional) return 0;
    for (Py_ssize_t i = 0; i < count; ++i) out[i] = i < given ? args[i] : nullptr;
    Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < keywords; ++k) {
        PyObject* key = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t found = -1;
        for (Py_ssize_t j = positional_only; j < count && found < 0; ++j) {
            if (PyTuple_GET_ITEM(names, j) == key) found = j;  // interned on both sides, as a rule
        }
        for (Py_ssize_t j = positional_only; j < count && found < 0; ++j) {
            int equal = PyUnicode_Compare(key, PyTuple_GET_ITEM(names, j));
            if (equal == -1 && PyErr_Occurred()) return -1;
            if (equal == 0) found = j;
        }
        if (found < 0 || out[found] != nullptr) return 0;
        out[found] = args[given + k];
    }
    PyObject* defaults = PyTuple_GET_ITEM(self, DEFAULTS);
    PyObject* required = PyTuple_GET_ITEM(self, REQUIRED);
    for (Py_ssize_t j = given; j < count; ++j) {
        if (out[j] != nullptr) continue;
        PyObject* fallback = PyTuple_GET_ITEM(defaults, j);
        if (fallback == required) return 0;
        out[j] = fallback;
    }
    return 1;
}

// The names from outside the region's body that its build took as fixed (a module constant, `F`, `F.gelu`,
// a helper, a builtin): Python reads them again at every call, so the compiled code answers only while each is
// bound to the object ppy/guard.py proved when the region was prepared. GUARDS is a list, one tuple per name:
// (namespace dict, name, the object proved), or (namespace dict, name) for a name it must not bind (a builtin
// the module would shadow). A few dict lookups of interned names: the region's whole per-call price. On a
// miss REBOUND proves the names again: True, it took the new objects and the compiled code goes on; False,
// the region now runs its Python body. 1: every name is current; 0: the Python body answers; -1: an error.
int names_current(PyObject* self) {
    if (!is_context(self)) return 1;  // the module's own function, which ppy's benches call: no region around it
    PyObject* guards = PyTuple_GET_ITEM(self, GUARDS);
    if (!PyList_CheckExact(guards)) {
        PyErr_SetString(PyExc_SystemError, "a ppy region context whose guards are not a list");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(guards); ++i) {
        PyObject* guard = PyList_GET_ITEM(guards, i);
        PyObject* held = PyDict_GetItemWithError(PyTuple_GET_ITEM(guard, 0), PyTuple_GET_ITEM(guard, 1));
        if (held == nullptr && PyErr_Occurred()) return -1;
        PyObject* proved = PyTuple_GET_SIZE(guard) == 3 ? PyTuple_GET_ITEM(guard, 2) : nullptr;
        if (held == proved) continue;
        PyObject* kept = PyObject_CallNoArgs(PyTuple_GET_ITEM(self, REBOUND));
        if (kept == nullptr) return -1;
        int still = PyObject_IsTrue(kept);
        Py_DECREF(kept);
        return still;
    }
    return 1;
}

// ppy's own Python call path (Region.__call__), for a call the entry cannot bind.
PyObject* slow_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    return PyObject_Vectorcall(PyTuple_GET_ITEM(self, SLOW_CALL), args, PyVectorcall_NARGS(nargsf), kwnames);
}

// An argument the compiled code does not take as it is (a tensor subclass, a fake tensor while torch
// traces, an int for a bool): Region.__call__ decides (the Python body, or the region's torch
// operator while torch compiles), or, for a positional entry, its caller on NotImplemented.
PyObject* not_taken(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    if (!binds(self)) Py_RETURN_NOTIMPLEMENTED;
    return slow_call(self, args, nargsf, kwnames);
}

// --- errors from inside a region -----------------------------------------------------------
// With the exception set, as Cython does for .pyx lines: a traceback entry for the region's
// statement, named as Python names the region's own frames (its code's file and name), and the
// statement after the exception's message. Called through a context (the region object, or
// `region.compiled`); a call of the module's own function gets neither. Always nullptr.
// `offset` counts from the region's first line (1), which the live code object knows: the frame
// names the line where the region is now, and a region that only moved needs no rebuild.
PyObject* located(PyObject* self, int offset) {
    if (offset <= 0 || !PyErr_Occurred() || !is_context(self)) return nullptr;
    PyObject* python = PyTuple_GET_ITEM(self, PYTHON_BODY);
    if (!PyFunction_Check(python)) return nullptr;
    auto* body = reinterpret_cast<PyCodeObject*>(PyFunction_GetCode(python));
    int line = body->co_firstlineno + offset - 1;
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_NormalizeException(&type, &value, &traceback);
    static PyObject* globals = PyDict_New();  // a frame needs globals; the region's own are not needed
    const char* file = PyUnicode_AsUTF8(body->co_filename);
    const char* function = file == nullptr ? nullptr : PyUnicode_AsUTF8(body->co_name);
    PyCodeObject* code = function == nullptr || globals == nullptr ? nullptr : PyCode_NewEmpty(file, function, line);
    PyFrameObject* frame = code == nullptr ? nullptr : PyFrame_New(PyThreadState_Get(), code, globals, nullptr);
    PyObject* text = nullptr;
    if (frame != nullptr) {
        PyObject* linecache = PyImport_ImportModule("linecache");
        PyObject* source = linecache == nullptr ? nullptr
                                                : PyObject_CallMethod(linecache, "getline", "Oi", body->co_filename, line);
        text = source == nullptr ? nullptr : PyObject_CallMethod(source, "strip", nullptr);
        Py_XDECREF(source);
        Py_XDECREF(linecache);
    }
    PyObject* region = frame == nullptr ? nullptr : PyObject_GetAttrString(python, "__qualname__");
    // A KeyError's argument is the key, which a handler reads (`except KeyError as e: e.args[0]`): it keeps it,
    // and the traceback entry alone names the statement.
    bool keyed = value != nullptr && PyErr_GivenExceptionMatches(value, PyExc_KeyError);
    PyObject* args = value == nullptr || region == nullptr || keyed ? nullptr : PyObject_GetAttrString(value, "args");
    if (args != nullptr && PyTuple_CheckExact(args) && PyTuple_GET_SIZE(args) == 1 &&
        PyUnicode_Check(PyTuple_GET_ITEM(args, 0)) && text != nullptr && PyUnicode_Check(text)) {
        // Without the source at hand (linecache finds no such line) the message still names the line.
        PyObject* message = PyUnicode_GET_LENGTH(text) > 0
            ? PyUnicode_FromFormat("%U\n  in region `%S`, line %d: %U", PyTuple_GET_ITEM(args, 0), region, line, text)
            : PyUnicode_FromFormat("%U\n  in region `%S`, line %d", PyTuple_GET_ITEM(args, 0), region, line);
        PyObject* replaced = message == nullptr ? nullptr : PyTuple_Pack(1, message);
        if (replaced == nullptr || PyObject_SetAttrString(value, "args", replaced) < 0) PyErr_Clear();
        Py_XDECREF(replaced);
        Py_XDECREF(message);
    }
    PyErr_Clear();  // anything that went wrong above: the original exception still stands
    Py_XDECREF(args);
    Py_XDECREF(region);
    Py_XDECREF(text);
    Py_XDECREF(reinterpret_cast<PyObject*>(code));
    PyErr_Restore(type, value, traceback);
    if (frame != nullptr) {
        PyTraceBack_Here(frame);
        Py_DECREF(reinterpret_cast<PyObject*>(frame));
    }
    return nullptr;
}

// --- a method region's reads through its instance (ppy/instance.py builds the program) ---
//
// The program, the reader's self: (steps, leaves, globals, accepted, hook_names, stores, classes, tags,
// functions, verify). Step i
// makes object i: step 0 is the instance; step (source, name, plain, cls, hooks, size, absent, ordered) reads
// `name` of object `source`, from the stores of an nn.Module as Module.__getattr__ searches them after the
// instance dict (`plain`: the class defines nothing of that name), else by getattr; `cls` (or None) is the exact
// class it must have (the instance may also have a class in `accepted`, a dict of each to the version tag its
// class had when ppy/instance.py's `accept` took it), `hooks` asks that none of `hook_names` in its dict holds
// anything but None or an empty dict (its hooks, `module.compile()`'s function), `size` (or None) is how many
// modules a container's `_modules` must hold (the build counted its items), `absent` names what its instance
// dict must not hold (the methods the build ran on it: an instance attribute of that name is what Python runs;
// an object with no __dict__ holds none), and `ordered` asks that its `_modules` keys be "0", "1", ... in order (a Sequential
// indexes and iterates by position, the reader reads by key).
// `classes` holds each class the build read (and its bases): its version tag (`tags`, one unsigned int each, 0
// for none yet) says that nothing of the class or its bases has changed since `verify(index)` (ppy/instance.py's
// ClassTable) last found it as the build read it; a class patched since (`Attention.forward = ...`) is asked
// again. `functions` (a list, which `verify` renews) holds, for each function the build inlined, (function,
// code, defaults, keyword defaults) as they were: a reload that swaps a function's code in place (IPython's
// autoreload) changes no class.
// The reader returns the objects `leaves` names, as a tuple; None where a check fails; NULL with the error
// where getattr raised.

namespace {

// What the reader holds of one object on the paths, for one call: the object, and its nn.Module dicts, each
// looked up once, when a step first needs it (the hook checks and every child's read share them).
struct Read {
    PyObject* object = nullptr;  // a new reference, but for the instance
    PyObject* dict = nullptr;  // its __dict__, a new reference
    // _parameters, _buffers, _modules: new references, forgotten after a step that runs code (forget_dicts).
    PyObject* stores[3] = {nullptr, nullptr, nullptr};
    bool stores_read = false;
};

// Most programs read a few dozen objects: those live on the stack, a longer program's on the heap.
struct Reads {
    static constexpr Py_ssize_t kOnStack = 64;
    Read on_stack[kOnStack];
    std::vector<Read> on_heap;
    Read* at;
    Py_ssize_t count;
    explicit Reads(Py_ssize_t n) : count(n) {
        if (n > kOnStack) on_heap.resize(static_cast<size_t>(n));
        at = n > kOnStack ? on_heap.data() : on_stack;
    }
    ~Reads() {
        forget_dicts();
        for (Py_ssize_t i = 1; i < count; ++i) Py_XDECREF(at[i].object);
    }
    // After a getattr, which may run any code (a property): the dicts are read again where needed.
    void forget_dicts() {
        for (Py_ssize_t i = 0; i < count; ++i) {
            Py_CLEAR(at[i].dict);
            for (PyObject*& store : at[i].stores) Py_CLEAR(store);
            at[i].stores_read = false;
        }
    }
};

PyObject* dict_of(Read& read) {
    if (read.dict == nullptr) read.dict = PyObject_GenericGetDict(read.object, nullptr);
    return read.dict;
}

// The stores Module.__getattr__ searches, in its order; false with the error set where the lookup raised.
bool stores_of(Read& read, PyObject* names) {
    if (read.stores_read) return true;
    PyObject* dict = dict_of(read);
    if (dict == nullptr) return false;
    for (Py_ssize_t s = 0; s < 3; ++s) {
        PyObject* store = PyDict_GetItemWithError(dict, PyTuple_GET_ITEM(names, s));
        if (store == nullptr && PyErr_Occurred()) return false;
        if (store != nullptr && PyDict_Check(store)) {
            Py_INCREF(store);
            read.stores[s] = store;
        }
    }
    read.stores_read = true;
    return true;
}

// `name` of an nn.Module whose class defines nothing of that name, as Python finds it: its __dict__, then the
// stores. A new reference; nullptr with the error set where a lookup raised, or without one where none holds it.
PyObject* module_attribute(Read& parent, PyObject* name, PyObject* store_names) {
    PyObject* dict = dict_of(parent);
    if (dict == nullptr) return nullptr;
    PyObject* found = PyDict_GetItemWithError(dict, name);
    if (found == nullptr && !PyErr_Occurred()) {
        if (!stores_of(parent, store_names)) return nullptr;
        for (PyObject* store : parent.stores) {
            if (store == nullptr) continue;
            found = PyDict_GetItemWithError(store, name);
            if (found != nullptr || PyErr_Occurred()) break;
        }
    }
    Py_XINCREF(found);
    return found;
}

// A type's version tag where it has a valid one, else 0: CPython gives a type a new one after any change to it
// or to a base (PyType_Modified), and assigns one when a lookup caches in it.
unsigned int valid_tag(PyTypeObject* type) {
    return (type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) != 0 ? type->tp_version_tag : 0;
}

// Whether each class the build read is unchanged since `verify` last found it as the build read it, or holds so
// now; -1 with the error set where `verify` raised.
int classes_hold(PyObject* classes, unsigned int* tags, PyObject* verify) {
    for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(classes); ++c) {
        auto* type = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(classes, c));
        unsigned int tag = valid_tag(type);
        if (tag != 0 && tag == tags[c]) continue;
        PyObject* index = PyLong_FromSsize_t(c);
        PyObject* holds = index == nullptr ? nullptr : PyObject_CallOneArg(verify, index);
        Py_XDECREF(index);
        if (holds == nullptr) return -1;
        int truth = PyObject_IsTrue(holds);
        Py_DECREF(holds);
        if (truth <= 0) return truth;
        // Read after `verify`, whose lookups assign the class a tag where it had none.
        tags[c] = valid_tag(type);
    }
    return 1;
}

// Whether each function the build inlined still has the code and defaults it had.
bool functions_hold(PyObject* functions) {
    for (Py_ssize_t f = 0; f < PyList_GET_SIZE(functions); ++f) {
        PyObject* entry = PyList_GET_ITEM(functions, f);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4 || !PyFunction_Check(PyTuple_GET_ITEM(entry, 0)))
            return false;
        PyObject* function = PyTuple_GET_ITEM(entry, 0);
        PyObject* defaults = PyFunction_GET_DEFAULTS(function);
        PyObject* keywords = PyFunction_GET_KW_DEFAULTS(function);
        if (PyFunction_GET_CODE(function) != PyTuple_GET_ITEM(entry, 1) ||
            (defaults != nullptr ? defaults : Py_None) != PyTuple_GET_ITEM(entry, 2) ||
            (keywords != nullptr ? keywords : Py_None) != PyTuple_GET_ITEM(entry, 3))
            return false;
    }
    return true;
}

// Whether `_modules` holds its items under "0", "1", ... in the order Python iterates them (an OrderedDict's
// own order, which `move_to_end` changes apart from the dict's storage).
int keys_in_order(PyObject* items) {
    char expected[24];
    Py_ssize_t index = 0;
    if (PyDict_CheckExact(items)) {
        Py_ssize_t at = 0;
        PyObject *key, *value;
        while (PyDict_Next(items, &at, &key, &value)) {
            std::snprintf(expected, sizeof expected, "%zd", index++);
            if (!PyUnicode_Check(key) || PyUnicode_CompareWithASCIIString(key, expected) != 0) return 0;
        }
        return 1;
    }
    PyObject* keys = PyObject_GetIter(items);
    if (keys == nullptr) return -1;
    int in_order = 1;
    while (PyObject* key = PyIter_Next(keys)) {
        std::snprintf(expected, sizeof expected, "%zd", index++);
        bool same = PyUnicode_Check(key) && PyUnicode_CompareWithASCIIString(key, expected) == 0;
        Py_DECREF(key);
        if (!same) {
            in_order = 0;
            break;
        }
    }
    Py_DECREF(keys);
    return PyErr_Occurred() ? -1 : in_order;
}

PyObject* read_instance(PyObject* program, PyObject* instance) {
    PyObject* steps = PyTuple_GET_ITEM(program, 0);
    PyObject* leaves = PyTuple_GET_ITEM(program, 1);
    PyObject* globals = PyTuple_GET_ITEM(program, 2);
    PyObject* accepted = PyTuple_GET_ITEM(program, 3);
    PyObject* hook_names = PyTuple_GET_ITEM(program, 4);
    PyObject* stores = PyTuple_GET_ITEM(program, 5);
    for (Py_ssize_t g = 0; g < PyTuple_GET_SIZE(globals); ++g) {
        PyObject* hooks = PyTuple_GET_ITEM(globals, g);
        if (PyDict_Check(hooks) && PyDict_GET_SIZE(hooks) > 0) Py_RETURN_NONE;
    }
    int held = classes_hold(PyTuple_GET_ITEM(program, 6),
                            reinterpret_cast<unsigned int*>(PyByteArray_AS_STRING(PyTuple_GET_ITEM(program, 7))),
                            PyTuple_GET_ITEM(program, 9));
    if (held < 0) return nullptr;
    if (held == 0 || !functions_hold(PyTuple_GET_ITEM(program, 8))) Py_RETURN_NONE;
    Py_ssize_t count = PyTuple_GET_SIZE(steps);
    Reads reads(count);
    for (Py_ssize_t i = 0; i < count; ++i) {
        PyObject* step = PyTuple_GET_ITEM(steps, i);
        PyObject* cls = PyTuple_GET_ITEM(step, 3);
        Read& read = reads.at[i];
        if (i == 0) {
            read.object = instance;
        } else {
            Read& parent = reads.at[PyLong_AsSsize_t(PyTuple_GET_ITEM(step, 0))];
            PyObject* name = PyTuple_GET_ITEM(step, 1);
            if (PyTuple_GET_ITEM(step, 2) == Py_True) {
                read.object = module_attribute(parent, name, stores);
                if (read.object == nullptr && PyErr_Occurred()) return nullptr;
            }
            if (read.object == nullptr) {
                read.object = PyObject_GetAttr(parent.object, name);
                if (read.object == nullptr) return nullptr;
                reads.forget_dicts();
            }
        }
        PyObject* object = read.object;
        if (cls != Py_None && reinterpret_cast<PyObject*>(Py_TYPE(object)) != cls) {
            auto* type = Py_TYPE(object);
            PyObject* tag = i == 0 ? PyDict_GetItemWithError(accepted, reinterpret_cast<PyObject*>(type)) : nullptr;
            if (tag == nullptr && PyErr_Occurred()) return nullptr;
            // A subclass `accept` took, unchanged since (else it asks again).
            if (tag == nullptr || valid_tag(type) == 0 || PyLong_AsUnsignedLong(tag) != valid_tag(type))
                Py_RETURN_NONE;
        }
        PyObject* absent = PyTuple_GET_ITEM(step, 6);
        bool hooks_checked = PyTuple_GET_ITEM(step, 4) == Py_True;
        if (hooks_checked || PyTuple_GET_SIZE(absent) > 0) {
            PyObject* dict = dict_of(read);
            // An object without a __dict__ (`__slots__`) holds no attribute of its own over a method.
            if (dict == nullptr && !hooks_checked && PyErr_ExceptionMatches(PyExc_AttributeError)) {
                PyErr_Clear();
                absent = nullptr;
            } else if (dict == nullptr) {
                return nullptr;
            }
            for (Py_ssize_t h = 0; hooks_checked && h < PyTuple_GET_SIZE(hook_names); ++h) {
                PyObject* hooks = PyDict_GetItemWithError(dict, PyTuple_GET_ITEM(hook_names, h));
                if (hooks == nullptr && PyErr_Occurred()) return nullptr;
                if (hooks != nullptr && hooks != Py_None && !(PyDict_Check(hooks) && PyDict_GET_SIZE(hooks) == 0))
                    Py_RETURN_NONE;
            }
            for (Py_ssize_t a = 0; absent != nullptr && a < PyTuple_GET_SIZE(absent); ++a) {
                PyObject* own = PyDict_GetItemWithError(dict, PyTuple_GET_ITEM(absent, a));
                if (own == nullptr && PyErr_Occurred()) return nullptr;
                if (own != nullptr) Py_RETURN_NONE;
            }
        }
        PyObject* size = PyTuple_GET_ITEM(step, 5);
        bool ordered = PyTuple_GET_ITEM(step, 7) == Py_True;
        if (size != Py_None || ordered) {
            if (!stores_of(read, stores)) return nullptr;
            PyObject* items = read.stores[2];  // _modules, a dict where it is one
            if (items == nullptr) Py_RETURN_NONE;
            if (size != Py_None && PyDict_GET_SIZE(items) != PyLong_AsSsize_t(size)) Py_RETURN_NONE;
            if (ordered) {
                int in_order = keys_in_order(items);
                if (in_order < 0) return nullptr;
                if (in_order == 0) Py_RETURN_NONE;
            }
        }
    }
    Py_ssize_t size = PyTuple_GET_SIZE(leaves);
    PyObject* result = PyTuple_New(size);
    if (result == nullptr) return nullptr;
    for (Py_ssize_t l = 0; l < size; ++l) {
        PyObject* value = reads.at[PyLong_AsSsize_t(PyTuple_GET_ITEM(leaves, l))].object;
        Py_INCREF(value);
        PyTuple_SET_ITEM(result, l, value);
    }
    return result;
}

PyMethodDef read_instance_def = {"read_instance", reinterpret_cast<PyCFunction>(read_instance), METH_O,
                                 "A method region's reads through its instance (ppy/instance.py)."};

// A method region's call from an instance in one C call (ppy/runtime.py's _method_call): the caller's self is
// (reader, entry, count); the arguments are the instance and the region's other `count` arguments. The reads
// follow the arguments on the entry's stack, as the compiled function takes them. NotImplemented where another
// number of arguments is given, a check fails, or an attribute is gone (AttributeError, KeyError): the caller
// then takes the runtime's path, which says why. Any other error of a read (a property's own) is raised.
PyObject* call_instance(PyObject* caller, PyObject* const* args, Py_ssize_t count) {
    PyObject* reader = PyTuple_GET_ITEM(caller, 0);
    PyObject* entry = PyTuple_GET_ITEM(caller, 1);
    if (count < 1 || count - 1 != PyLong_AsSsize_t(PyTuple_GET_ITEM(caller, 2))) Py_RETURN_NOTIMPLEMENTED;
    PyObject* values = read_instance(PyCFunction_GET_SELF(reader), args[0]);
    if (values == nullptr) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError) && !PyErr_ExceptionMatches(PyExc_KeyError)) return nullptr;
        PyErr_Clear();
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (values == Py_None) {
        Py_DECREF(values);
        Py_RETURN_NOTIMPLEMENTED;
    }
    Py_ssize_t reads = PyTuple_GET_SIZE(values);
    Py_ssize_t total = count - 1 + reads;
    constexpr Py_ssize_t kOnStack = 96;
    PyObject* on_stack[kOnStack];
    std::vector<PyObject*> on_heap;
    PyObject** stack = on_stack;
    if (total > kOnStack) {
        on_heap.resize(static_cast<size_t>(total));
        stack = on_heap.data();
    }
    for (Py_ssize_t i = 1; i < count; ++i) stack[i - 1] = args[i];
    for (Py_ssize_t r = 0; r < reads; ++r) stack[count - 1 + r] = PyTuple_GET_ITEM(values, r);
    PyObject* result = PyObject_Vectorcall(entry, stack, static_cast<size_t>(total), nullptr);
    Py_DECREF(values);
    return result;
}

PyMethodDef call_instance_def = {"call_instance",
                                 reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call_instance)),
                                 METH_FASTCALL, "A method region's compiled call from its instance (ppy/runtime.py)."};

bool all_strings(PyObject* names) {
    if (!PyTuple_Check(names)) return false;
    for (Py_ssize_t n = 0; n < PyTuple_GET_SIZE(names); ++n)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(names, n))) return false;
    return true;
}

bool is_class_table(PyObject* classes, PyObject* tags) {
    if (!PyTuple_Check(classes) || !PyByteArray_Check(tags) ||
        PyByteArray_GET_SIZE(tags) != PyTuple_GET_SIZE(classes) * static_cast<Py_ssize_t>(sizeof(unsigned int)))
        return false;
    for (Py_ssize_t c = 0; c < PyTuple_GET_SIZE(classes); ++c)
        if (!PyType_Check(PyTuple_GET_ITEM(classes, c))) return false;
    return true;
}

// A list (ClassTable renews it), whose entries are checked where they are read: any Python code may change it.
bool is_function_table(PyObject* functions) {
    if (!PyList_Check(functions)) return false;
    for (Py_ssize_t f = 0; f < PyList_GET_SIZE(functions); ++f) {
        PyObject* entry = PyList_GET_ITEM(functions, f);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4 || !PyFunction_Check(PyTuple_GET_ITEM(entry, 0)))
            return false;
    }
    return true;
}

bool is_program(PyObject* program) {
    if (!PyTuple_Check(program) || PyTuple_GET_SIZE(program) != 10 ||
        !is_function_table(PyTuple_GET_ITEM(program, 8)) || !PyCallable_Check(PyTuple_GET_ITEM(program, 9)))
        return false;
    PyObject* steps = PyTuple_GET_ITEM(program, 0);
    PyObject* leaves = PyTuple_GET_ITEM(program, 1);
    if (!PyTuple_Check(steps) || PyTuple_GET_SIZE(steps) < 1 || !PyTuple_Check(leaves) ||
        !PyTuple_Check(PyTuple_GET_ITEM(program, 2)) || !PyDict_Check(PyTuple_GET_ITEM(program, 3)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(program, 4)) || !PyTuple_Check(PyTuple_GET_ITEM(program, 5)) ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(program, 5)) != 3 ||
        !is_class_table(PyTuple_GET_ITEM(program, 6), PyTuple_GET_ITEM(program, 7)))
        return false;
    Py_ssize_t count = PyTuple_GET_SIZE(steps);
    for (Py_ssize_t i = 0; i < count; ++i) {
        PyObject* step = PyTuple_GET_ITEM(steps, i);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 8 || !all_strings(PyTuple_GET_ITEM(step, 6))) return false;
        PyObject* cls = PyTuple_GET_ITEM(step, 3);
        if (cls != Py_None && !PyType_Check(cls)) return false;
        PyObject* size = PyTuple_GET_ITEM(step, 5);
        if (size != Py_None && (!PyLong_Check(size) || PyLong_AsSsize_t(size) < 0)) return false;
        if (i == 0) continue;
        Py_ssize_t source = PyLong_Check(PyTuple_GET_ITEM(step, 0)) ? PyLong_AsSsize_t(PyTuple_GET_ITEM(step, 0)) : -1;
        if (source < 0 || source >= i || !PyUnicode_Check(PyTuple_GET_ITEM(step, 1))) return false;
    }
    for (Py_ssize_t l = 0; l < PyTuple_GET_SIZE(leaves); ++l) {
        PyObject* leaf = PyTuple_GET_ITEM(leaves, l);
        Py_ssize_t index = PyLong_Check(leaf) ? PyLong_AsSsize_t(leaf) : -1;
        if (index < 0 || index >= count) return false;
    }
    PyErr_Clear();
    return true;
}

}  // namespace

}  // namespace ppy_bridge

// --- the bridge's Python module: called once per region, never per call ---
namespace ppy_bridge {
namespace {

PyObject* bound_entry(PyObject*, PyObject* const* args, Py_ssize_t count) {
    if (count != 2 || !PyCFunction_Check(args[0]) ||
        reinterpret_cast<PyCFunctionObject*>(args[0])->m_ml->ml_flags != (METH_FASTCALL | METH_KEYWORDS) ||
        !is_context(args[1])) {
        PyErr_SetString(PyExc_TypeError, "bound_entry takes a region module's entry and a region context");
        return nullptr;
    }
    auto* function = reinterpret_cast<PyCFunctionObject*>(args[0]);
    return PyCFunction_NewEx(function->m_ml, args[1], function->m_module);
}

PyObject* forward_ad_active_py(PyObject*, PyObject*) {
    try {
        return PyBool_FromLong(forward_ad_active());
    } catch (...) {
        return raise_current();
    }
}

PyObject* instance_reader(PyObject*, PyObject* program) {
    if (!is_program(program)) {
        PyErr_SetString(PyExc_TypeError, "instance_reader takes a read program");
        return nullptr;
    }
    return PyCFunction_NewEx(&read_instance_def, program, nullptr);
}

PyObject* type_version(PyObject*, PyObject* type) {
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "type_version takes a class");
        return nullptr;
    }
    auto* cls = reinterpret_cast<PyTypeObject*>(type);
    if (valid_tag(cls) == 0) {
        static PyObject* name = PyUnicode_InternFromString("__getattr__");
        if (name == nullptr) return nullptr;
        _PyType_Lookup(cls, name);  // a lookup assigns the class a tag where it can have one
    }
    return PyLong_FromUnsignedLong(valid_tag(cls));
}

PyObject* instance_caller(PyObject*, PyObject* const* args, Py_ssize_t count) {
    if (count != 3 || !PyCFunction_Check(args[0]) ||
        reinterpret_cast<PyCFunctionObject*>(args[0])->m_ml != &read_instance_def || !PyCallable_Check(args[1]) ||
        !PyLong_Check(args[2]) || PyLong_AsSsize_t(args[2]) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "instance_caller takes an instance reader, an entry and a count");
        return nullptr;
    }
    PyObject* caller = PyTuple_Pack(3, args[0], args[1], args[2]);
    if (caller == nullptr) return nullptr;
    PyObject* function = PyCFunction_NewEx(&call_instance_def, caller, nullptr);
    Py_DECREF(caller);
    return function;
}

PyMethodDef methods[] = {
    {"bound_entry", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(bound_entry)), METH_FASTCALL,
     "bound_entry(entry, context): the entry's C function with `context` as its self: what a region object's "
     "__call__ becomes."},
    {"forward_ad_active", forward_ad_active_py, METH_NOARGS,
     "forward_ad_active(): whether a forward-mode AD level is entered."},
    {"instance_reader", instance_reader, METH_O,
     "instance_reader(program): a method region's reads through its instance as one C function of the instance "
     "(ppy/instance.py)."},
    {"type_version", type_version, METH_O,
     "type_version(cls): the class's version tag, which CPython changes whenever the class or a base changes; 0 "
     "where it has none (ppy/instance.py)."},
    {"instance_caller", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(instance_caller)), METH_FASTCALL,
     "instance_caller(reader, entry, count): a function of an instance and `count` arguments that calls `entry` "
     "with those and what `reader` reads from the instance; NotImplemented where the reader or the entry declines "
     "(ppy/runtime.py)."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "ppy_bridge",
                          "ppy's bridge to torch, shared by every region module of this torch version.", -1, methods,
                          nullptr, nullptr, nullptr, nullptr};

}  // namespace
}  // namespace ppy_bridge

// Loading the bridge as a Python extension module: ppy_compile/load.py has already loaded it with global
// symbols, which the region modules that link against it resolve against.
PyMODINIT_FUNC PyInit_ppy_bridge() {
    // torch's Python module defines the classes the check reads (THPVariableClass is null until it has loaded).
    PyObject* torch = PyImport_ImportModule("torch");
    if (torch == nullptr) return nullptr;
    Py_DECREF(torch);
    try {  // nothing thrown may cross into CPython's import machinery (std::terminate)
        if (!ppy_bridge::tensor_layout_holds()) {
            PyErr_SetString(PyExc_ImportError,
                            "ppy's bridge does not match this torch: a torch.Tensor's Python object is not laid out "
                            "as the bridge reads it (torch 2.11 and later), so ppy cannot compile regions here and "
                            "runs their Python bodies");
            return nullptr;
        }
    } catch (...) {
        return ppy_bridge::raise_current();
    }
    return PyModule_Create(&ppy_bridge::module_def);
}
