"""The C++ that every region module shares: the bridge to torch's Python objects, and the helpers.

The bridge is one small shared object built once per torch version (and
compiler). It is the only code that includes torch's Python headers, whose
parsing and pybind11 template instantiation cost most of a build (see
NOTES.md: 16 s for ``python_variable.h`` alone). Region modules include only
the ATen headers of the ops they call, declare the bridge's few functions,
and link against it, so a module builds in seconds. The bridge reaches
tensors through torch's own ``THPVariable`` API, never a copied layout.
"""

from __future__ import annotations

BRIDGE_SOURCE = r"""
// ppy bridge: the only translation unit that includes torch's Python headers.
#include <torch/csrc/Dtype.h>
#include <torch/csrc/DynamicTypes.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

namespace ppy_bridge {

bool unpack_tensor(PyObject* object, at::Tensor& out) {
    if (!THPVariable_Check(object)) return false;
    out = THPVariable_Unpack(object);
    return true;
}

// The tensor a Python object holds, without a reference count: valid while the object lives.
const at::Tensor* borrow_tensor(PyObject* object) {
    return THPVariable_Check(object) ? &THPVariable_Unpack(object) : nullptr;
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

}  // namespace ppy_bridge

// Loading the bridge as a Python extension module keeps its symbols
// resolvable for the region modules that link against it.
static PyModuleDef bridge_module = {PyModuleDef_HEAD_INIT, "ppy_bridge", nullptr, -1, nullptr};
PyMODINIT_FUNC PyInit_ppy_bridge() { return PyModule_Create(&bridge_module); }
"""

# Everything a region module may include, compiled once per torch version,
# compiler and -O level into a precompiled header (PPY_PCH=0 turns it off).
# Parsing these headers is most of a module's build (NOTES.md: a GPT-2 block
# builds in 1.5 s from it against 5.4 s without); the price is a one-time build
# of about 17 s and some 400 MB in the cache.
PCH_HEADER = r"""
#include <Python.h>
#include <ATen/core/Tensor.h>
#include <ATen/Functions.h>
#include <ATen/TensorIndexing.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/Reduction.h>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>
"""

PREAMBLE = r"""
#include <Python.h>
#include <ATen/core/Tensor.h>
#include <ATen/ScalarOps.h>
#include <ATen/core/Reduction.h>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ppy_bridge {
bool unpack_tensor(PyObject* object, at::Tensor& out);
const at::Tensor* borrow_tensor(PyObject* object);
PyObject* wrap_tensor(const at::Tensor& tensor);
bool unpack_dtype(PyObject* object, at::ScalarType& out);
PyObject* wrap_dtype(at::ScalarType dtype);
PyObject* raise_current();
}

namespace ppy {

// Python's numbers, exactly: `//` and `%` floor, `**` of ints stays an int.
inline int64_t floordiv(int64_t a, int64_t b) {
    TORCH_CHECK(b != 0, "integer division or modulo by zero");
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t mod(int64_t a, int64_t b) {
    TORCH_CHECK(b != 0, "integer division or modulo by zero");
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline double mod(double a, double b) {
    TORCH_CHECK(b != 0.0, "float modulo");
    double r = std::fmod(a, b);
    if (r != 0.0) { if ((b < 0) != (r < 0)) r += b; } else { r = std::copysign(0.0, b); }
    return r;
}
inline double floordiv(double a, double b) {
    TORCH_CHECK(b != 0.0, "float floor division by zero");
    double r = std::fmod(a, b);
    double q = (a - r) / b;
    if (r != 0.0 && ((b < 0) != (r < 0))) q -= 1.0;
    if (q == 0.0) return std::copysign(0.0, a / b);
    double f = std::floor(q);
    return (q - f > 0.5) ? f + 1.0 : f;
}
template <class A, class B> inline auto mod(A a, B b) { return mod(static_cast<double>(a), static_cast<double>(b)); }
template <class A, class B> inline auto floordiv(A a, B b) { return floordiv(static_cast<double>(a), static_cast<double>(b)); }
inline int64_t power(int64_t base, int64_t exponent) {
    TORCH_CHECK_VALUE(exponent >= 0, "a negative int exponent gives a float in Python; write the base as a float");
    int64_t result = 1;
    while (exponent-- > 0) result *= base;
    return result;
}
template <class A, class B> inline double power(A a, B b) { return std::pow(static_cast<double>(a), static_cast<double>(b)); }

template <class T> inline T value(const std::optional<T>& maybe, const char* what) {
    TORCH_CHECK_TYPE(maybe.has_value(), what, " is None where a value is required");
    return *maybe;
}

inline at::Tensor wrapped_number(const at::Scalar& scalar) {
    // What torch's Python argument parser does with a number passed as a tensor.
    auto tensor = c10::scalar_to_tensor(scalar);
    tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
    return tensor;
}

template <class T> inline void expect_size(const std::vector<T>& values, size_t count) {
    TORCH_CHECK_VALUE(values.size() == count, "expected ", count, " values to unpack, got ", values.size());
}
template <class T> inline T at(const std::vector<T>& values, int64_t index) {
    int64_t size = static_cast<int64_t>(values.size());
    int64_t position = index < 0 ? index + size : index;
    TORCH_CHECK_INDEX(position >= 0 && position < size, "index ", index, " is out of range for ", size, " values");
    return values[position];
}
template <class T> inline std::vector<T> slice(const std::vector<T>& values, std::optional<int64_t> lower,
                                               std::optional<int64_t> upper, std::optional<int64_t> step) {
    int64_t size = static_cast<int64_t>(values.size());
    int64_t s = step.value_or(1);
    TORCH_CHECK_VALUE(s != 0, "slice step cannot be zero");
    auto clamp = [&](std::optional<int64_t> bound, int64_t fallback) {
        if (!bound) return fallback;
        int64_t b = *bound < 0 ? *bound + size : *bound;
        return s > 0 ? std::min(std::max<int64_t>(b, 0), size) : std::min(std::max<int64_t>(b, -1), size - 1);
    };
    int64_t start = clamp(lower, s > 0 ? 0 : size - 1);
    int64_t stop = clamp(upper, s > 0 ? size : -1);
    std::vector<T> out;
    for (int64_t i = start; s > 0 ? i < stop : i > stop; i += s) out.push_back(values[i]);
    return out;
}
inline std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}
inline c10::List<std::optional<at::Tensor>> optional_list(const std::vector<at::Tensor>& tensors) {
    c10::List<std::optional<at::Tensor>> out;
    for (const auto& t : tensors) out.push_back(t);
    return out;
}

// Every overload is declared before any is defined: a tuple of vectors of
// tuples must find them all from inside the templates.
inline bool parse(PyObject* o, at::Tensor& out, const char* where);
inline bool parse(PyObject* o, int64_t& out, const char* where);
inline bool parse(PyObject* o, double& out, const char* where);
inline bool parse(PyObject* o, bool& out, const char* where);
inline bool parse(PyObject* o, std::string& out, const char* where);
inline bool parse(PyObject* o, at::ScalarType& out, const char* where);
template <class T> inline bool parse(PyObject* o, std::optional<T>& out, const char* where);
template <class T> inline bool parse(PyObject* o, std::vector<T>& out, const char* where);
template <class... T> inline bool parse(PyObject* o, std::tuple<T...>& out, const char* where);
inline PyObject* to_python(const at::Tensor& t);
inline PyObject* to_python(int64_t v);
inline PyObject* to_python(double v);
inline PyObject* to_python(bool v);
inline PyObject* to_python(const std::string& v);
inline PyObject* to_python(at::ScalarType v);
template <class T> inline PyObject* to_python(const std::optional<T>& v);
template <class T> inline PyObject* to_python(const std::vector<T>& values);
template <class... T> inline PyObject* to_python(const std::tuple<T...>& values);

// --- Python objects in ------------------------------------------------------

inline bool fail(const char* where, const char* expected, PyObject* object) {
    PyErr_Format(PyExc_TypeError, "%s must be %s, not %s", where, expected, Py_TYPE(object)->tp_name);
    return false;
}
// A tensor argument: borrowed from its Python object for the length of the call.
inline const at::Tensor* tensor_arg(PyObject* o, const char* where) {
    const at::Tensor* tensor = ppy_bridge::borrow_tensor(o);
    if (tensor == nullptr) fail(where, "a Tensor", o);
    return tensor;
}
inline bool parse(PyObject* o, at::Tensor& out, const char* where) {
    return ppy_bridge::unpack_tensor(o, out) || fail(where, "a Tensor", o);
}
inline bool parse(PyObject* o, int64_t& out, const char* where) {
    if (!PyLong_Check(o) && !PyIndex_Check(o)) return fail(where, "an int", o);
    out = PyLong_AsLongLong(o);
    return !(out == -1 && PyErr_Occurred());
}
inline bool parse(PyObject* o, double& out, const char* where) {
    if (!PyFloat_Check(o) && !PyLong_Check(o)) return fail(where, "a float", o);
    out = PyFloat_AsDouble(o);
    return !(out == -1.0 && PyErr_Occurred());
}
inline bool parse(PyObject* o, bool& out, const char* where) {
    if (!PyBool_Check(o)) return fail(where, "a bool", o);
    out = (o == Py_True);
    return true;
}
inline bool parse(PyObject* o, std::string& out, const char* where) {
    if (!PyUnicode_Check(o)) return fail(where, "a str", o);
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(o, &size);
    if (data == nullptr) return false;
    out.assign(data, static_cast<size_t>(size));
    return true;
}
inline bool parse(PyObject* o, at::ScalarType& out, const char* where) {
    return ppy_bridge::unpack_dtype(o, out) || fail(where, "a torch.dtype", o);
}
template <class T> inline bool parse(PyObject* o, std::optional<T>& out, const char* where) {
    if (o == Py_None) { out.reset(); return true; }
    T value{};
    if (!parse(o, value, where)) return false;
    out = std::move(value);
    return true;
}
template <class T> inline bool parse(PyObject* o, std::vector<T>& out, const char* where) {
    if (!PyTuple_Check(o) && !PyList_Check(o)) return fail(where, "a tuple", o);
    Py_ssize_t size = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    out.resize(static_cast<size_t>(size));
    for (Py_ssize_t i = 0; i < size; ++i) if (!parse(items[i], out[i], where)) return false;
    return true;
}
template <class Tuple, size_t... I> inline bool parse_items(PyObject** items, Tuple& out, const char* where, std::index_sequence<I...>) {
    return (parse(items[I], std::get<I>(out), where) && ...);
}
template <class... T> inline bool parse(PyObject* o, std::tuple<T...>& out, const char* where) {
    if (!PyTuple_Check(o) && !PyList_Check(o)) return fail(where, "a tuple", o);
    if (PySequence_Fast_GET_SIZE(o) != static_cast<Py_ssize_t>(sizeof...(T))) {
        PyErr_Format(PyExc_TypeError, "%s must have %d items", where, static_cast<int>(sizeof...(T)));
        return false;
    }
    return parse_items(PySequence_Fast_ITEMS(o), out, where, std::index_sequence_for<T...>{});
}

// --- Python objects out -----------------------------------------------------

inline PyObject* to_python(const at::Tensor& t) { return ppy_bridge::wrap_tensor(t); }
inline PyObject* to_python(int64_t v) { return PyLong_FromLongLong(v); }
inline PyObject* to_python(double v) { return PyFloat_FromDouble(v); }
inline PyObject* to_python(bool v) { return PyBool_FromLong(v); }
inline PyObject* to_python(const std::string& v) { return PyUnicode_FromStringAndSize(v.data(), static_cast<Py_ssize_t>(v.size())); }
inline PyObject* to_python(at::ScalarType v) { return ppy_bridge::wrap_dtype(v); }
template <class T> inline PyObject* to_python(const std::optional<T>& v) {
    if (!v) Py_RETURN_NONE;
    return to_python(*v);
}
template <class T> inline PyObject* to_python(const std::vector<T>& values) {
    PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(values.size()));
    if (tuple == nullptr) return nullptr;
    for (size_t i = 0; i < values.size(); ++i) {
        PyObject* item = to_python(values[i]);
        if (item == nullptr) { Py_DECREF(tuple); return nullptr; }
        PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
    }
    return tuple;
}
template <class Tuple, size_t... I> inline PyObject* tuple_to_python(const Tuple& values, std::index_sequence<I...>) {
    PyObject* items[] = {to_python(std::get<I>(values))...};
    PyObject* tuple = PyTuple_New(sizeof...(I));
    bool ok = tuple != nullptr;
    for (size_t i = 0; i < sizeof...(I); ++i) {
        if (items[i] == nullptr) ok = false;
        if (ok) PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), items[i]); else Py_XDECREF(items[i]);
    }
    if (!ok) { Py_XDECREF(tuple); return nullptr; }
    return tuple;
}
template <class... T> inline PyObject* to_python(const std::tuple<T...>& values) {
    return tuple_to_python(values, std::index_sequence_for<T...>{});
}

inline PyObject* wrong_count(const char* region, Py_ssize_t expected, Py_ssize_t given) {
    PyErr_Format(PyExc_TypeError, "region `%s` takes %zd arguments, got %zd", region, expected, given);
    return nullptr;
}

// The GIL is released while ATen works, as torch's own bindings do, and taken
// back on every way out, exceptions included.
struct WithoutGil {
    PyThreadState* state = PyEval_SaveThread();
    ~WithoutGil() { PyEval_RestoreThread(state); }
};

}  // namespace ppy
"""
