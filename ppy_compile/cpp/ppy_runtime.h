// The helpers every region module includes (namespace ppy): Python's int arithmetic and builtins as
// Python computes them, the conversions of call arguments and results between Python objects and C++
// values, and the checks of the entry's fast path below autograd. Included by each generated module.cpp
// (ppy_compile/unit.py) after the precompiled header, when it has one, and by ppy_indexing.h; the bridge
// never includes it.
// Its functions are inline templates and small functions, defined in each module that includes it.
#ifndef PPY_RUNTIME_H
#define PPY_RUNTIME_H

// The one include list of the modules, and the bridge's declarations.
#include "ppy_includes.h"
#include "ppy_bridge.h"

// libtorch's CPU scalar tensor, declared as ATen/ScalarOps.h declares it: that header includes every op's header,
// which would double a module's parse time (its mangled name carries the parameter types: a mismatch fails the load).
namespace at::detail {
TORCH_API Tensor scalar_tensor_static(const Scalar& s, std::optional<ScalarType> dtype_opt,
                                      std::optional<Device> device_opt);
}  // namespace at::detail
// torch._C._infer_size's C++ (2.11's weighted binary_cross_entropy calls it), as ATen/ExpandUtils.h declares it:
// that header includes ATen/Functions.h, every op's declaration.
namespace at {
TORCH_API std::vector<int64_t> infer_size(IntArrayRef a, IntArrayRef b);
}  // namespace at

namespace ppy {

// A Python str's UTF-8 bytes, every one of them (a NUL too: a std::string built from a `const char*` would stop
// there), a lone surrogate as surrogatepass writes it, as string_literal writes the region's literals; "" (the
// error cleared) where it is no str. With the GIL held.
inline std::string str_bytes(PyObject* text) {
    PyObject* bytes = text == nullptr ? nullptr : PyUnicode_AsEncodedString(text, "utf-8", "surrogatepass");
    if (bytes == nullptr) { PyErr_Clear(); return std::string(); }
    std::string out(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
    Py_DECREF(bytes);
    return out;
}

// A Python exception raised by the region's own arithmetic (not by an ATen op).
struct PythonError {
    PyObject* type;
    std::string message;
    PyObject* raise() const {
        // All of the message, by its size: PyErr_SetString reads a C string, which ends at the first NUL, and a
        // str the message formats may hold one (`f"got {s}"`). Decoded as str_bytes and string_literal encode.
        PyObject* text = PyUnicode_DecodeUTF8(message.data(), static_cast<Py_ssize_t>(message.size()), "surrogatepass");
        if (text == nullptr) return nullptr;
        PyErr_SetObject(type, text);
        Py_DECREF(text);
        return nullptr;
    }
};
[[noreturn]] inline void raise(PyObject* type, std::string message) { throw PythonError{type, std::move(message)}; }

// Whether the process skips asserts (`python -O`, PYTHONOPTIMIZE): a region's own `assert`s are skipped with them.
// sys.flags cannot change while the process runs, so it is read once, when a module is loaded (GIL held).
inline bool asserts_skipped = false;
inline void read_flags() {
    PyObject* flags = PySys_GetObject("flags");  // borrowed
    PyObject* optimize = flags == nullptr ? nullptr : PyObject_GetAttrString(flags, "optimize");
    asserts_skipped = optimize != nullptr && PyLong_AsLong(optimize) >= 1;
    Py_XDECREF(optimize);
    PyErr_Clear();
}

// Part of a result built as a tuple subclass Python would hand back (torch.Size, torch.return_types.max): the part
// at `path` in tuples this call made is replaced by class(part). The class is found once, with the GIL held.
inline PyObject* as_class(PyObject* result, std::initializer_list<Py_ssize_t> path, PyObject*& type,
                          const char* module, const char* name) {
    if (result == nullptr) return nullptr;
    if (type == nullptr) {
        PyObject* found = PyImport_ImportModule(module);
        type = found == nullptr ? nullptr : PyObject_GetAttrString(found, name);
        Py_XDECREF(found);
        if (type == nullptr) { Py_DECREF(result); return nullptr; }
    }
    PyObject* holder = nullptr;
    PyObject* part = result;
    Py_ssize_t last = 0;
    for (Py_ssize_t index : path) { holder = part; last = index; part = PyTuple_GET_ITEM(holder, index); }
    PyObject* made = PyObject_CallOneArg(type, part);
    if (made == nullptr) { Py_DECREF(result); return nullptr; }
    if (holder == nullptr) { Py_DECREF(result); return made; }
    Py_DECREF(part);
    PyTuple_SET_ITEM(holder, last, made);
    return result;
}

// --- Python's arithmetic on ints (64-bit, raising where Python's big ints would not fit) ---
inline int64_t overflow() { raise(PyExc_OverflowError, "integer result does not fit in the 64 bits torch takes"); }
inline int64_t py_add(int64_t a, int64_t b) { int64_t r; if (__builtin_add_overflow(a, b, &r)) overflow(); return r; }
inline int64_t py_sub(int64_t a, int64_t b) { int64_t r; if (__builtin_sub_overflow(a, b, &r)) overflow(); return r; }
inline int64_t py_mul(int64_t a, int64_t b) { int64_t r; if (__builtin_mul_overflow(a, b, &r)) overflow(); return r; }
inline int64_t py_neg(int64_t a) { if (a == std::numeric_limits<int64_t>::min()) overflow(); return -a; }
inline int64_t py_pos(int64_t a) { return a; }
inline int64_t py_abs(int64_t a) { return a < 0 ? py_neg(a) : a; }
inline int64_t py_invert(int64_t a) { return ~a; }
inline int64_t py_floordiv(int64_t a, int64_t b) {
    if (b == 0) raise(PyExc_ZeroDivisionError, "integer division or modulo by zero");
    if (a == std::numeric_limits<int64_t>::min() && b == -1) overflow();
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t py_mod(int64_t a, int64_t b) {
    if (b == 0) raise(PyExc_ZeroDivisionError, "integer modulo by zero");  // `//` says "integer division or modulo"
    if (b == -1) return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
inline int64_t py_lshift(int64_t a, int64_t b) {
    if (b < 0) raise(PyExc_ValueError, "negative shift count");
    if (a == 0) return 0;
    if (b >= 63 || (a > 0 ? a > (std::numeric_limits<int64_t>::max() >> b) : a < (std::numeric_limits<int64_t>::min() >> b))) overflow();
    return static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}
inline int64_t py_rshift(int64_t a, int64_t b) {
    if (b < 0) raise(PyExc_ValueError, "negative shift count");
    return b >= 63 ? (a < 0 ? -1 : 0) : (a >> b);
}
inline int64_t py_and(int64_t a, int64_t b) { return a & b; }
inline int64_t py_or(int64_t a, int64_t b) { return a | b; }
inline int64_t py_xor(int64_t a, int64_t b) { return a ^ b; }
template <char Op> inline bool py_bool_bits(bool a, bool b) { return Op == '&' ? (a && b) : Op == '|' ? (a || b) : (a != b); }
inline int64_t py_min(std::initializer_list<int64_t> v) { return std::min(v); }
inline int64_t py_max(std::initializer_list<int64_t> v) { return std::max(v); }
// `"a" * n`: empty for a count below one; Python's OverflowError past what a str can hold.
inline ::std::string repeat_str(const ::std::string& text, int64_t count) {
    if (count <= 0 || text.empty()) return ::std::string();
    if (count > static_cast<int64_t>(PY_SSIZE_T_MAX / static_cast<Py_ssize_t>(text.size())))
        raise(PyExc_OverflowError, "repeated string is too long");
    ::std::string out;
    out.reserve(text.size() * static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) out += text;
    return out;
}
// `min(x.shape)`, `max(seq)` of one sequence: the first extreme item, as Python's comparisons pick it; `empty` is
// Python's message for an empty one (it differs between releases: the emitter takes the running Python's).
template <bool Max, class T> inline T py_extreme_of(const std::vector<T>& v, const char* empty) {
    if (v.empty()) raise(PyExc_ValueError, empty);
    return Max ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end());
}

// --- on floats ---
inline double py_add(double a, double b) { return a + b; }
inline double py_sub(double a, double b) { return a - b; }
inline double py_mul(double a, double b) { return a * b; }
inline double py_neg(double a) { return -a; }
inline double py_pos(double a) { return a; }
inline double py_abs(double a) { return std::fabs(a); }
inline double py_truediv(double a, double b) {
    if (b == 0.0) raise(PyExc_ZeroDivisionError, "float division by zero");
    return a / b;
}
inline double py_mod(double a, double b) {
    if (b == 0.0) raise(PyExc_ZeroDivisionError, "float modulo");
    double r = std::fmod(a, b);
    if (r != 0.0) { if ((b < 0) != (r < 0)) r += b; } else { r = std::copysign(0.0, b); }
    return r;
}
inline double py_floordiv(double a, double b) {
    if (b == 0.0) raise(PyExc_ZeroDivisionError, "float floor division by zero");
    double m = std::fmod(a, b);
    double d = (a - m) / b;
    if (m != 0.0 && ((b < 0) != (m < 0))) d -= 1.0;
    if (d == 0.0) return std::copysign(0.0, a / b);
    double f = std::floor(d);
    return (d - f > 0.5) ? f + 1.0 : f;
}
// What float.__pow__ and math.pow both answer before libm: a zero exponent, and any NaN or infinity, in this
// order (1.0 ** nan is 1.0, 0.0 ** -inf is inf, (-inf) ** 0.5 is inf). False where both are finite.
inline bool pow_settled(double a, double b, double& out) {
    if (b == 0.0) { out = 1.0; return true; }
    if (std::isnan(a)) { out = a; return true; }
    if (std::isnan(b)) { out = a == 1.0 ? 1.0 : b; return true; }
    if (std::isinf(b)) {
        double size = std::fabs(a);
        out = size == 1.0 ? 1.0 : (b > 0.0) == (size > 1.0) ? std::numeric_limits<double>::infinity() : 0.0;
        return true;
    }
    if (std::isinf(a)) {
        bool odd = std::fmod(std::fabs(b), 2.0) == 1.0;
        out = b > 0.0 ? (odd ? a : std::fabs(a)) : (odd ? std::copysign(0.0, a) : 0.0);
        return true;
    }
    return false;
}
inline double py_pow(double a, double b) {
    double r;
    if (pow_settled(a, b, r)) return r;
    if (a == 0.0) {
        if (b < 0.0) raise(PyExc_ZeroDivisionError, "0.0 cannot be raised to a negative power");
        return std::fmod(std::fabs(b), 2.0) == 1.0 ? a : 0.0;
    }
    // Python's answer is a complex number, which a region has no type for.
    if (a < 0.0 && b != std::floor(b)) raise(PyExc_ValueError, "a negative number to a fractional power is complex");
    r = std::pow(a, b);
    if (std::isinf(r)) raise(PyExc_OverflowError, "(34, 'Numerical result out of range')");
    return r;
}
inline double py_min(std::initializer_list<double> v) { return std::min(v); }
inline double py_max(std::initializer_list<double> v) { return std::max(v); }

// --- on numbers known only at run time (an int or a float, as at::Scalar keeps them) ---
inline bool is_int(const at::Scalar& s) { return s.isIntegral(false); }
inline at::Scalar number(int64_t v) { return at::Scalar(v); }
inline at::Scalar number(double v) { return at::Scalar(v); }
#define PPY_NUMBER_OP(name) \
    inline at::Scalar name(const at::Scalar& a, const at::Scalar& b) { \
        return (is_int(a) && is_int(b)) ? number(name(a.toLong(), b.toLong())) : number(name(a.toDouble(), b.toDouble())); }
PPY_NUMBER_OP(py_add)
PPY_NUMBER_OP(py_sub)
PPY_NUMBER_OP(py_mul)
PPY_NUMBER_OP(py_floordiv)
PPY_NUMBER_OP(py_mod)
#undef PPY_NUMBER_OP
inline at::Scalar py_neg(const at::Scalar& a) { return is_int(a) ? number(py_neg(a.toLong())) : number(-a.toDouble()); }
inline at::Scalar py_pos(const at::Scalar& a) { return a; }
inline at::Scalar py_abs(const at::Scalar& a) { return is_int(a) ? number(py_abs(a.toLong())) : number(std::fabs(a.toDouble())); }
// int / int as Python computes it: the exact quotient rounded once (half to even), not the quotient of the two
// ints each rounded to a double first, which differs in the last bit for ints beyond 2**53.
inline double py_int_truediv(int64_t a, int64_t b) {
    if (b == 0) raise(PyExc_ZeroDivisionError, "division by zero");  // Python's message for two ints
    constexpr uint64_t exact = uint64_t{1} << 53;
    bool negative = (a < 0) != (b < 0);
    uint64_t na = a < 0 ? uint64_t{0} - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
    uint64_t nb = b < 0 ? uint64_t{0} - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
    if (na <= exact && nb <= exact) return static_cast<double>(a) / static_cast<double>(b);
    if (na == 0) return negative ? -0.0 : 0.0;
    int shift = 55 - ((64 - __builtin_clzll(na)) - (64 - __builtin_clzll(nb)));  // a quotient of 55 or 56 bits
    unsigned __int128 num = na, den = nb;
    if (shift >= 0) num <<= shift; else den <<= -shift;
    unsigned __int128 q = num / den;
    bool sticky = num % den != 0;
    int extra = (128 - (q >> 64 ? __builtin_clzll(static_cast<uint64_t>(q >> 64)) : 64 + __builtin_clzll(static_cast<uint64_t>(q)))) - 53;
    uint64_t mantissa = static_cast<uint64_t>(q >> extra);
    uint64_t rest = static_cast<uint64_t>(q) & ((uint64_t{1} << extra) - 1), half = uint64_t{1} << (extra - 1);
    if (rest > half || (rest == half && (sticky || (mantissa & 1)))) ++mantissa;
    double result = std::ldexp(static_cast<double>(mantissa), extra - shift);
    return negative ? -result : result;
}
inline at::Scalar py_truediv(const at::Scalar& a, const at::Scalar& b) {
    if (is_int(a) && is_int(b)) return number(py_int_truediv(a.toLong(), b.toLong()));
    return number(py_truediv(a.toDouble(), b.toDouble()));
}
inline int64_t py_pow(int64_t a, int64_t b);
inline at::Scalar py_pow(const at::Scalar& a, const at::Scalar& b) {
    if (is_int(a) && is_int(b) && b.toLong() >= 0) return number(py_pow(a.toLong(), b.toLong()));
    return number(py_pow(a.toDouble(), b.toDouble()));
}
inline int64_t py_pow(int64_t a, int64_t b) {
    if (b < 0) raise(PyExc_ValueError, "an int to a negative power is a float");
    int64_t result = 1;
    while (b > 0) { if (b & 1) result = py_mul(result, a); b >>= 1; if (b) a = py_mul(a, a); }
    return result;
}
enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };
template <Cmp C> inline bool py_compare(const at::Scalar& a, const at::Scalar& b);
inline bool scalar_less(const at::Scalar& a, const at::Scalar& b) { return py_compare<Cmp::Lt>(a, b); }
inline at::Scalar py_min(std::initializer_list<at::Scalar> v) {
    at::Scalar best = *v.begin(); for (const auto& x : v) if (scalar_less(x, best)) best = x; return best;
}
inline at::Scalar py_max(std::initializer_list<at::Scalar> v) {
    at::Scalar best = *v.begin(); for (const auto& x : v) if (scalar_less(best, x)) best = x; return best;
}

// --- comparisons, truth, conversions ---
template <Cmp C, class T> inline bool py_compare(const T& a, const T& b) {
    switch (C) {
        case Cmp::Eq: return a == b;
        case Cmp::Ne: return a != b;
        case Cmp::Lt: return a < b;
        case Cmp::Le: return a <= b;
        case Cmp::Gt: return a > b;
        default: return a >= b;
    }
}
// An int against a float, compared exactly as Python does (2**53 + 1 != 2.0**53), not after rounding the int
// to a double: -1, 0 or 1; 2 when the float is NaN (every comparison but != is false).
inline int compare_int_float(int64_t a, double b) {
    if (std::isnan(b)) return 2;
    if (b >= 9223372036854775808.0) return -1;
    if (b < -9223372036854775808.0) return 1;
    double whole = std::floor(b);
    int64_t floor_b = static_cast<int64_t>(whole);
    if (a < floor_b) return -1;
    if (a > floor_b) return 1;
    return b > whole ? -1 : 0;
}
template <Cmp C> inline bool py_order(int order) {
    if (order == 2) return C == Cmp::Ne;
    switch (C) {
        case Cmp::Eq: return order == 0;
        case Cmp::Ne: return order != 0;
        case Cmp::Lt: return order < 0;
        case Cmp::Le: return order <= 0;
        case Cmp::Gt: return order > 0;
        default: return order >= 0;
    }
}
template <Cmp C> inline bool py_compare(int64_t a, double b) { return py_order<C>(compare_int_float(a, b)); }
template <Cmp C> inline bool py_compare(double a, int64_t b) {
    int order = compare_int_float(b, a);
    return py_order<C>(order == 2 ? 2 : -order);
}
template <Cmp C> inline bool py_compare(const at::Scalar& a, const at::Scalar& b) {
    if (is_int(a) && is_int(b)) return py_compare<C>(a.toLong(), b.toLong());
    if (is_int(a)) return py_compare<C>(a.toLong(), b.toDouble());
    if (is_int(b)) return py_compare<C>(a.toDouble(), b.toLong());
    return py_compare<C>(a.toDouble(), b.toDouble());
}
inline bool py_bool(bool v) { return v; }
inline bool py_bool(int64_t v) { return v != 0; }
inline bool py_bool(double v) { return v != 0.0; }
inline bool py_bool(const at::Scalar& v) { return is_int(v) ? v.toLong() != 0 : v.toDouble() != 0.0; }
// float(t) in torch's own Python code (BatchNorm's cumulative average of num_batches_tracked): a read of the
// value where eager's Python makes it, with Python's error for more than one element.
inline double tensor_float(const at::Tensor& t) {
    if (t.numel() != 1) raise(PyExc_ValueError, "only one element tensors can be converted to Python scalars");
    return t.item().toDouble();
}
inline int64_t py_int(int64_t v) { return v; }
inline int64_t py_int(bool v) { return v; }
inline int64_t py_int(double v) {
    if (std::isnan(v)) raise(PyExc_ValueError, "cannot convert float NaN to integer");
    if (std::isinf(v)) raise(PyExc_OverflowError, "cannot convert float infinity to integer");
    double truncated = std::trunc(v);
    if (truncated < -9223372036854775808.0 || truncated >= 9223372036854775808.0) overflow();
    return static_cast<int64_t>(truncated);
}
inline int64_t py_int(const at::Scalar& v) { return is_int(v) ? v.toLong() : py_int(v.toDouble()); }
inline int64_t py_round(double v) { return py_int(std::nearbyint(v)); }  // the default rounding mode is half to even
inline int64_t py_round(int64_t v) { return v; }
inline int64_t py_round(bool v) { return v; }
inline int64_t py_round(const at::Scalar& v) { return is_int(v) ? v.toLong() : py_round(v.toDouble()); }
template <class Call> inline double python_float(Call call);
inline double py_round_digits(double v, int64_t digits) {
    // float.__round__ rounds the exact decimal value (round(2.675, 2) is 2.67, round(x, -400) is 0.0 with x's
    // sign, OverflowError past the largest float): v * 10**digits in doubles rounds twice and differs.
    return python_float([&]() {
        PyObject* number = PyFloat_FromDouble(v);
        PyObject* result = number == nullptr ? nullptr : PyObject_CallMethod(number, "__round__", "L", static_cast<long long>(digits));
        Py_XDECREF(number);
        return result;
    });
}
inline int64_t py_round_digits(int64_t v, int64_t digits) {
    if (digits >= 0) return v;
    // A multiple of 10**19 or more: every int64 rounds to 0, or at -19 digits to +-10**19 (beyond 64 bits)
    // when it is past the half, 5 * 10**18 itself rounding to the even 0.
    if (digits < -19) return 0;
    if (digits == -19) { if (v > INT64_C(5000000000000000000) || v < -INT64_C(5000000000000000000)) overflow(); return 0; }
    int64_t scale = 1;
    for (int64_t i = 0; i < -digits; ++i) scale *= 10;
    int64_t q = py_floordiv(v, scale), r = v - q * scale;
    if (2 * r > scale || (2 * r == scale && (q & 1))) q += 1;
    return py_mul(q, scale);  // round(2**63 - 1, -1) is 2**63 + 3: too big
}
inline at::Scalar py_round_digits(const at::Scalar& v, int64_t digits) {
    return is_int(v) ? number(py_round_digits(v.toLong(), digits)) : number(py_round_digits(v.toDouble(), digits));
}

// --- math: Python's domain and range errors ---
// A float CPython computes with its own code rather than libm's (math.gamma and math.lgamma are its own Lanczos
// sums, math.hypot its own extended-precision norm, float.__round__ its own decimal rounding, none what glibc
// gives to the last bit): `call` runs with the
// GIL taken back, and its exception is raised as Python raised it.
template <class Call> inline double python_float(Call call) {
    PyGILState_STATE state = PyGILState_Ensure();
    PyObject* result = call();
    double value = result == nullptr ? 0.0 : PyFloat_AsDouble(result);
    Py_XDECREF(result);
    if (PyErr_Occurred()) {
        PyObject *type, *error, *traceback;
        PyErr_Fetch(&type, &error, &traceback);
        PyObject* text = error == nullptr ? nullptr : PyObject_Str(error);
        PythonError raised{type, str_bytes(text)};  // a builtin exception type: it outlives this
        PyErr_Clear();
        Py_XDECREF(text); Py_XDECREF(error); Py_XDECREF(traceback); Py_XDECREF(type);
        PyGILState_Release(state);
        throw raised;
    }
    PyGILState_Release(state);
    return value;
}
template <class... Args> inline double python_math(const char* name, const char* format, Args... args) {
    return python_float([&]() {
        PyObject* math = PyImport_ImportModule("math");
        PyObject* result = math == nullptr ? nullptr : PyObject_CallMethod(math, name, format, args...);
        Py_XDECREF(math);
        return result;
    });
}
// torch.einsum's contraction path for three operands or more: None, or opt_einsum's, as torch's Python code
// finds it from torch.backends.opt_einsum's settings and the operands' sizes. Asked at every call, with the GIL
// taken back, of ppy.einsum.contract_path (torch's own lines), so the products are taken in eager's order; what
// it raises (opt_einsum's ValueError for sizes that do not match) is raised as Python raised it.
inline ::std::optional<::std::vector<int64_t>> einsum_path(const ::std::string& equation,
                                                            const ::std::vector<at::Tensor>& operands) {
    PyGILState_STATE state = PyGILState_Ensure();
    ::std::optional<::std::vector<int64_t>> path;
    PyObject* module = PyImport_ImportModule("ppy.einsum");
    PyObject* args = PyTuple_New(static_cast<Py_ssize_t>(operands.size() + 1));
    PyObject* result = nullptr;
    if (module != nullptr && args != nullptr) {
        bool ok = true;
        PyTuple_SET_ITEM(args, 0, PyUnicode_FromStringAndSize(equation.data(), static_cast<Py_ssize_t>(equation.size())));
        for (size_t i = 0; i < operands.size(); ++i) {
            PyObject* wrapped = ppy_bridge::wrap_tensor(operands[i]);
            ok = ok && wrapped != nullptr;
            PyTuple_SET_ITEM(args, static_cast<Py_ssize_t>(i + 1), wrapped);
        }
        PyObject* function = ok ? PyObject_GetAttrString(module, "contract_path") : nullptr;
        result = function == nullptr ? nullptr : PyObject_Call(function, args, nullptr);
        Py_XDECREF(function);
    }
    if (result != nullptr && result != Py_None) {
        path.emplace();
        Py_ssize_t size = PyList_Check(result) ? PyList_GET_SIZE(result) : -1;
        for (Py_ssize_t i = 0; i < size; ++i) {
            long long index = PyLong_AsLongLong(PyList_GET_ITEM(result, i));
            if (index == -1 && PyErr_Occurred()) break;
            path->push_back(static_cast<int64_t>(index));
        }
        if (size < 0) PyErr_SetString(PyExc_TypeError, "ppy.einsum.contract_path returned no list");
    }
    Py_XDECREF(result); Py_XDECREF(args); Py_XDECREF(module);
    if (PyErr_Occurred()) {
        PyObject *type, *error, *traceback;
        PyErr_Fetch(&type, &error, &traceback);
        PyObject* text = error == nullptr ? nullptr : PyObject_Str(error);
        // The type keeps the reference fetched: an exception class lives as long as its module anyway.
        PythonError raised{type, str_bytes(text)};
        PyErr_Clear();
        Py_XDECREF(text); Py_XDECREF(error); Py_XDECREF(traceback);
        PyGILState_Release(state);
        throw raised;
    }
    PyGILState_Release(state);
    return path;
}
inline double math_check(double r, double x) {
    if (std::isnan(r) && !std::isnan(x)) raise(PyExc_ValueError, "math domain error");
    if (std::isinf(r) && std::isfinite(x)) raise(PyExc_OverflowError, "math range error");
    return r;
}
inline double math_sqrt(double x) { return math_check(std::sqrt(x), x); }
inline double math_exp(double x) { return math_check(std::exp(x), x); }
inline double math_expm1(double x) { return math_check(std::expm1(x), x); }
inline double math_log(double x) { if (x <= 0) raise(PyExc_ValueError, "math domain error"); return std::log(x); }
inline double math_log(double x, double base) {
    double num = math_log(x), den = math_log(base);
    if (den == 0.0) raise(PyExc_ZeroDivisionError, "float division by zero");  // math.log(x, 1)
    return num / den;
}
inline double math_log2(double x) { if (x <= 0) raise(PyExc_ValueError, "math domain error"); return std::log2(x); }
inline double math_log10(double x) { if (x <= 0) raise(PyExc_ValueError, "math domain error"); return std::log10(x); }
inline double math_log1p(double x) { if (x <= -1) raise(PyExc_ValueError, "math domain error"); return std::log1p(x); }
inline double math_sin(double x) { return math_check(std::sin(x), x); }
inline double math_cos(double x) { return math_check(std::cos(x), x); }
inline double math_tan(double x) { return math_check(std::tan(x), x); }
inline double math_asin(double x) { return math_check(std::asin(x), x); }
inline double math_acos(double x) { return math_check(std::acos(x), x); }
inline double math_atan(double x) { return std::atan(x); }
inline double math_sinh(double x) { return math_check(std::sinh(x), x); }
inline double math_cosh(double x) { return math_check(std::cosh(x), x); }
inline double math_tanh(double x) { return std::tanh(x); }
inline double math_asinh(double x) { return std::asinh(x); }
inline double math_acosh(double x) { return math_check(std::acosh(x), x); }
inline double math_atanh(double x) { if (std::fabs(x) >= 1) raise(PyExc_ValueError, "math domain error"); return std::atanh(x); }
inline double math_erf(double x) { return std::erf(x); }
inline double math_erfc(double x) { return std::erfc(x); }
inline double math_gamma(double x) { return python_math("gamma", "d", x); }
inline double math_lgamma(double x) { return python_math("lgamma", "d", x); }
inline double math_fabs(double x) { return std::fabs(x); }
inline double math_degrees(double x) { return x * (180.0 / M_PI); }
inline double math_radians(double x) { return x * (M_PI / 180.0); }
inline double math_atan2(double y, double x) { return std::atan2(y, x); }
inline double math_hypot(double x, double y) { return python_math("hypot", "dd", x, y); }
inline double math_pow(double x, double y) {
    // Only a finite x ** y that overflows is a range error; 0.0 ** -1.0 is a domain error (not ZeroDivisionError).
    double r;
    if (pow_settled(x, y, r)) return r;
    r = std::pow(x, y);
    if (std::isnan(r) || (std::isinf(r) && x == 0.0)) raise(PyExc_ValueError, "math domain error");
    if (std::isinf(r)) raise(PyExc_OverflowError, "math range error");
    return r;
}
inline double math_fmod(double x, double y) {
    if (y == 0.0 || std::isinf(x)) raise(PyExc_ValueError, "math domain error");
    return std::fmod(x, y);
}
inline double math_copysign(double x, double y) { return std::copysign(x, y); }
inline int64_t math_ceil(double x) { return py_int(std::ceil(x)); }
inline int64_t math_floor(double x) { return py_int(std::floor(x)); }
inline int64_t math_trunc(double x) { return py_int(std::trunc(x)); }
// Of a `float` parameter given an int: the int itself, as Python gives it, not the int rounded to a double.
inline int64_t math_ceil(const at::Scalar& x) { return is_int(x) ? x.toLong() : math_ceil(x.toDouble()); }
inline int64_t math_floor(const at::Scalar& x) { return is_int(x) ? x.toLong() : math_floor(x.toDouble()); }
inline int64_t math_trunc(const at::Scalar& x) { return is_int(x) ? x.toLong() : math_trunc(x.toDouble()); }
inline bool math_isfinite(double x) { return std::isfinite(x); }
inline bool math_isinf(double x) { return std::isinf(x); }
inline bool math_isnan(double x) { return std::isnan(x); }
inline int64_t math_gcd(int64_t a, int64_t b) {
    // On magnitudes: gcd(-2**63, 6) is 2 although abs(-2**63) does not fit; only a gcd of 2**63 itself does not.
    uint64_t x = a < 0 ? uint64_t{0} - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
    uint64_t y = b < 0 ? uint64_t{0} - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
    while (y) { uint64_t r = x % y; x = y; y = r; }
    if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) overflow();
    return static_cast<int64_t>(x);
}
inline int64_t math_lcm(int64_t a, int64_t b) { if (a == 0 || b == 0) return 0; return py_abs(py_mul(a / math_gcd(a, b), b)); }

// --- optionals, sequences ---
// An optional list or str parameter (at::OptionalIntArrayRef, std::optional<c10::string_view>, ...) viewing `owned`,
// which the caller keeps alive for the call: its own variable, or a temporary of the call's full expression (never
// a lambda's local: see cpp_types._optional_of_optional).
template <class View, class Owned> inline View optional_view(const std::optional<Owned>& owned) {
    if (!owned) return std::nullopt;
    if constexpr (std::is_same_v<View, at::OptionalSymIntArrayRef>) return View(c10::fromIntArrayRefSlow(*owned));
    else return View(*owned);
}
template <class T> inline T value(const std::optional<T>& maybe, const char* what) {
    if (!maybe.has_value()) raise(PyExc_TypeError, std::string(what) + " is None where a value is required");
    return *maybe;
}
// An `int | None` slice bound of a tensor index: None is the bound's default, as in Python.
inline ::std::optional<c10::SymInt> slice_bound(const ::std::optional<int64_t>& bound) {
    if (!bound.has_value()) return ::std::nullopt;
    return c10::SymInt(*bound);
}
// A run-time slice step of a tensor index. at::indexing::Slice refuses a zero step when it is built, before the
// index runs; torch's Python indexing reaches the step in order: a lone slice (`x[a:b:0]`) at once, a slice in a
// tuple of indices only after counting the indices against the tensor's dimensions ("too many indices...") and
// applying the indices before it (`x[9, ::0]` is IndexError). So the Slice takes 1 for 0 (slice_step), and
// check_steps, given each run-time step's position and whether it is zero, raises first what Python would.
inline c10::SymInt slice_step(int64_t step) { return c10::SymInt(step == 0 ? 1 : step); }
inline ::std::optional<c10::SymInt> slice_step(const ::std::optional<int64_t>& step) {
    if (!step.has_value()) return ::std::nullopt;
    return slice_step(*step);
}
inline bool is_zero_step(const ::std::optional<int64_t>& step) { return step.has_value() && *step == 0; }
// A sequence of ints as Python prints it: a torch.Size ('S'), a tuple ('T'), a list ('L').
inline ::std::string shown_ints(const ::std::vector<int64_t>& v, char kind) {
    ::std::string items;
    for (size_t i = 0; i < v.size(); ++i) items += (i ? ", " : "") + ::std::to_string(v[i]);
    if (kind == 'S') return "torch.Size([" + items + "])";
    if (kind == 'L') return "[" + items + "]";
    return "(" + items + (v.size() == 1 ? ",)" : ")");
}
// torch._refs._broadcast_shapes: the common shape of `shapes`, with torch's errors word for word.
inline ::std::vector<int64_t> broadcast_shapes(std::initializer_list<::std::vector<int64_t>> shapes, const char* kinds) {
    size_t rank = 0;
    for (const auto& shape : shapes) rank = std::max(rank, shape.size());
    ::std::vector<int64_t> common(rank, 1);
    size_t arg = 0;
    for (const auto& shape : shapes) {
        const auto n = static_cast<int64_t>(shape.size());
        for (int64_t idx = -1; idx >= -n; --idx) {
            const int64_t size = shape[static_cast<size_t>(n + idx)];
            int64_t& joined = common[static_cast<size_t>(static_cast<int64_t>(rank) + idx)];
            if (size == joined) continue;
            if (joined == 1) {
                if (size < 0) raise(PyExc_ValueError, "Attempting to broadcast a dimension with negative length!");
                joined = size;
            }
            if (size == 1) continue;
            if (joined != size)
                raise(PyExc_RuntimeError, "Attempting to broadcast a dimension of length " + ::std::to_string(size) +
                      " at " + ::std::to_string(idx) + "! Mismatching argument at index " + ::std::to_string(arg) +
                      " had " + shown_ints(shape, kinds[arg]) + "; but expected shape should be broadcastable to " +
                      shown_ints(common, 'L'));
        }
        ++arg;
    }
    return common;
}
template <class T> inline void expect_length(const std::vector<T>& values, size_t count, bool at_least) {
    // Python's message: "expected at least N" where a starred target takes the rest.
    if (values.size() < count) raise(PyExc_ValueError, std::string("not enough values to unpack (expected ") + (at_least ? "at least " : "") + std::to_string(count) + ", got " + std::to_string(values.size()) + ")");
    if (!at_least && values.size() > count) raise(PyExc_ValueError, "too many values to unpack (expected " + std::to_string(count) + ")");
}
template <class T> inline T at(const std::vector<T>& values, int64_t index) {
    int64_t size = static_cast<int64_t>(values.size());
    int64_t position = index < 0 ? index + size : index;
    if (position < 0 || position >= size) raise(PyExc_IndexError, "tuple index out of range");
    return values[position];
}
template <class T> inline std::vector<T> slice(const std::vector<T>& values, std::optional<int64_t> lower,
                                               std::optional<int64_t> upper, std::optional<int64_t> step) {
    int64_t size = static_cast<int64_t>(values.size());
    int64_t s = step.value_or(1);
    if (s == 0) raise(PyExc_ValueError, "slice step cannot be zero");
    auto clamp = [&](std::optional<int64_t> bound, int64_t fallback) {
        if (!bound) return fallback;
        int64_t b = *bound < 0 ? *bound + size : *bound;
        return s > 0 ? std::min(std::max<int64_t>(b, 0), size) : std::min(std::max<int64_t>(b, -1), size - 1);
    };
    int64_t start = clamp(lower, s > 0 ? 0 : size - 1);
    int64_t stop = clamp(upper, s > 0 ? size : -1);
    // As Python's PySlice_AdjustIndices: the count first, so that `i += s` never passes int64 (`t[3::2**63 - 1]`).
    const uint64_t magnitude = s > 0 ? static_cast<uint64_t>(s) : uint64_t{0} - static_cast<uint64_t>(s);
    const int64_t span = s > 0 ? stop - start : start - stop;
    const int64_t count = span > 0 ? static_cast<int64_t>(static_cast<uint64_t>(span - 1) / magnitude) + 1 : 0;
    std::vector<T> out;
    for (int64_t k = 0, i = start; k < count; ++k, i += (k < count ? s : 0)) out.push_back(values[i]);
    return out;
}
template <class T> inline std::vector<T> join(std::initializer_list<std::vector<T>> parts) {
    std::vector<T> out;
    for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
    return out;
}
// str() of a Python float: its shortest repr, by CPython's own code (`1.5`, `2.0`, `1e+300`, `inf`).
inline std::string float_str(double value) {
    PyGILState_STATE state = PyGILState_Ensure();
    char* text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, nullptr);
    std::string out = text == nullptr ? std::to_string(value) : std::string(text);
    if (text == nullptr) PyErr_Clear();
    PyMem_Free(text);
    PyGILState_Release(state);
    return out;
}
inline std::string dtype_str(at::ScalarType dtype);
// str() of what a message formats at run time, as Python prints it: an int, a bool, a float, a number (a float
// parameter may hold an int), a dtype.
inline std::string shown(int64_t value) { return std::to_string(value); }
inline std::string shown(bool value) { return value ? "True" : "False"; }
inline std::string shown(double value) { return float_str(value); }
inline std::string shown(at::ScalarType value) { return dtype_str(value); }
inline std::string shown(const at::Scalar& value) {
    if (value.isBoolean()) return shown(value.toBool());
    return value.isIntegral(false) ? shown(value.toLong()) : float_str(value.toDouble());
}
// A sequence of run-time length as Python prints it: `(1, 2)`, `(1,)`, `[1, 2]`, `torch.Size([1, 2])`.
template <class T>
inline std::string seq_str(const std::vector<T>& items, const char* opening, const char* closing, bool tuple_comma) {
    std::string out = opening;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        out += shown(static_cast<T>(items[i]));
    }
    if (tuple_comma && items.size() == 1) out += ",";
    return out + closing;
}
// str() of a torch.dtype, for a message that formats one known only at run time: Python's own str() of torch's
// dtype object (the GIL taken back), so every dtype reads as Python prints it (`torch.float8_e4m3fn`, `torch.uint16`),
// where c10::toString gives the C++ name (`Float8_e4m3fn`, `UInt16`). Only a failing check formats one.
inline std::string dtype_str(at::ScalarType dtype) {
    PyGILState_STATE state = PyGILState_Ensure();
    PyObject* object = ppy_bridge::wrap_dtype(dtype);
    PyObject* text = object == nullptr ? nullptr : PyObject_Str(object);
    std::string out = text == nullptr ? std::string("torch.") + c10::toString(dtype) : str_bytes(text);
    if (text == nullptr) PyErr_Clear();
    Py_XDECREF(text);
    Py_XDECREF(object);
    PyGILState_Release(state);
    return out;
}
// Python's `range(count)`: 0 to count - 1, none for a count below 1.
inline std::vector<int64_t> py_range(int64_t count) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < count; ++i) out.push_back(i);
    return out;
}
// Python's `range(start, stop, step)`; ValueError for a step of 0.
inline std::vector<int64_t> py_range(int64_t start, int64_t stop, int64_t step = 1) {
    if (step == 0) raise(PyExc_ValueError, "range() arg 3 must not be zero");
    std::vector<int64_t> out;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
    return out;
}
// `torch.iinfo(dtype).min` or `.max`: TypeError for a dtype that is not an integer, with Python's message; the one bound
// an int64 cannot hold (uint64's max) raises rather than differ from Python's value.
inline int64_t iinfo(at::ScalarType dtype, bool maximum) {
    switch (dtype) {
        case at::kByte: return maximum ? 255 : 0;
        case at::kChar: return maximum ? 127 : -128;
        case at::kShort: return maximum ? 32767 : -32768;
        case at::kInt: return maximum ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min();
        case at::kLong: return maximum ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
        case at::kUInt16: return maximum ? 65535 : 0;
        case at::kUInt32: return maximum ? static_cast<int64_t>(std::numeric_limits<uint32_t>::max()) : 0;
        case at::kUInt64:
            if (!maximum) return 0;
            throw std::overflow_error("torch.iinfo(torch.uint64).max does not fit in 64 signed bits");
        case at::kBool: TORCH_CHECK_TYPE(false, "torch.bool is not supported by torch.iinfo");
        default:
            TORCH_CHECK_TYPE(false, "torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                             "'torch.iinfo'");
    }
}
// `torch.finfo(dtype).<attribute>`, as torch's TypeInfo.cpp computes it: the limits of the dtype's real type
// (complex64's are float's), and TypeError with Python's message for a dtype that is not floating.
enum class FInfo { Min, Max, Eps, Tiny, Resolution, Bits };
template <class T> inline double finfo_of(FInfo attribute) {
    using Limits = std::numeric_limits<T>;
    switch (attribute) {
        case FInfo::Min: return static_cast<double>(Limits::lowest());
        case FInfo::Max: return static_cast<double>(Limits::max());
        case FInfo::Eps: return static_cast<double>(Limits::epsilon());
        case FInfo::Tiny: return static_cast<double>(Limits::min());
        case FInfo::Resolution: return std::pow(10, -Limits::digits10);
        case FInfo::Bits: return static_cast<double>(sizeof(T) * 8);
    }
    return 0;
}
inline double finfo(at::ScalarType dtype, FInfo attribute) {
    switch (dtype) {
        case at::kHalf: case at::kComplexHalf: return finfo_of<at::Half>(attribute);
        case at::kBFloat16: return finfo_of<at::BFloat16>(attribute);
        case at::kFloat: case at::kComplexFloat: return finfo_of<float>(attribute);
        case at::kDouble: case at::kComplexDouble: return finfo_of<double>(attribute);
        case at::kFloat8_e5m2: return finfo_of<c10::Float8_e5m2>(attribute);
        case at::kFloat8_e4m3fn: return finfo_of<c10::Float8_e4m3fn>(attribute);
        case at::kFloat8_e5m2fnuz: return finfo_of<c10::Float8_e5m2fnuz>(attribute);
        case at::kFloat8_e4m3fnuz: return finfo_of<c10::Float8_e4m3fnuz>(attribute);
#if __has_include(<c10/util/Float8_e8m0fnu.h>)  // torch 2.7 on: the declared range's older releases lack it
        case at::kFloat8_e8m0fnu: return finfo_of<c10::Float8_e8m0fnu>(attribute);
#endif
        default:
            TORCH_CHECK_TYPE(false, "torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                             "'torch.finfo'");
    }
}
inline int64_t product(const std::vector<int64_t>& values) {
    int64_t out = 1;
    for (int64_t v : values) out = py_mul(out, v);
    return out;
}
// Python's `t * n`: () at once for n <= 0 or an empty t (however large n is), and MemoryError (no message) for a
// result past what a tuple can hold (about 2**60 items) or than memory can.
template <class T> inline std::vector<T> repeat(const std::vector<T>& values, int64_t count) {
    std::vector<T> out;
    if (count <= 0 || values.empty()) return out;
    const int64_t size = static_cast<int64_t>(values.size());
    if (size > (std::numeric_limits<int64_t>::max() - 16) / 8 / count) raise(PyExc_MemoryError, "");
    try {
        out.reserve(static_cast<size_t>(size * count));
    } catch (const std::exception&) {  // std::bad_alloc, std::length_error
        raise(PyExc_MemoryError, "");
    }
    for (int64_t i = 0; i < count; ++i) out.insert(out.end(), values.begin(), values.end());
    return out;
}
template <class T, class S> inline std::vector<T> convert_vector(const std::vector<S>& values) {
    std::vector<T> out;
    out.reserve(values.size());
    for (const auto& v : values) {
        // A Python number (int or float) where torch takes a double: the value as that number, as Python's float().
        if constexpr (std::is_same_v<S, at::Scalar> && std::is_arithmetic_v<T>) out.push_back(v.template to<T>());
        else out.push_back(T(v));
    }
    return out;
}
template <size_t N> inline std::array<bool, N> bool_array(const std::vector<bool>& values) {
    if (values.size() != N) raise(PyExc_TypeError, "expected " + std::to_string(N) + " bools");
    std::array<bool, N> out{};
    for (size_t i = 0; i < N; ++i) out[i] = values[i];
    return out;
}

// --- tensors ---
inline at::Tensor wrapped_number(const at::Scalar& scalar) {
    // What torch's Python argument parser does with a number passed as a tensor: c10::scalar_to_tensor's CPU path
    // (ATen/ScalarOps.h, which includes every op's header: see scalar_tensor_static above).
    auto tensor = at::detail::scalar_tensor_static(scalar, scalar.type(), at::kCPU);
    tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
    return tensor;
}
inline at::Device device_index(int64_t index) { return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)); }
inline at::Tensor with_requires_grad(at::Tensor tensor, bool requires_grad) {
    if (requires_grad) tensor.set_requires_grad(true);
    return tensor;
}

// --- Python objects in: 1 taken, 0 not exactly this type (the caller runs the Python body), -1 error ---
// What a value is taken into before it is taken: T{}, but at::Device has no default (a CPU device stands in), and
// so neither has a tuple holding one. The entry declares each parameter's value with it.
template <class T> struct Blank { static T make() { return T{}; } };
template <> struct Blank<at::Device> { static at::Device make() { return at::Device(at::kCPU); } };
template <class... T> struct Blank<std::tuple<T...>> {
    static std::tuple<T...> make() { return std::tuple<T...>(Blank<T>::make()...); }
};
template <class T> inline T blank() { return Blank<T>::make(); }
template <class T> inline int take(PyObject* o, std::optional<T>& out);
template <class T> inline int take(PyObject* o, std::vector<T>& out);
template <class... T> inline int take(PyObject* o, std::tuple<T...>& out);
inline int take(PyObject* o, at::Tensor& out) {
    const at::Tensor* tensor = ppy_bridge::borrow_plain_tensor(o);
    if (tensor == nullptr) return 0;
    out = *tensor;
    return 1;
}
inline int take(PyObject* o, int64_t& out) {
    if (!PyLong_CheckExact(o)) return 0;
    int overflowed = 0;
    out = PyLong_AsLongLongAndOverflow(o, &overflowed);
    if (overflowed) return 0;  // a big int: Python's own arithmetic decides what happens
    return (out == -1 && PyErr_Occurred()) ? -1 : 1;
}
inline int take(PyObject* o, at::Scalar& out) {
    if (PyFloat_Check(o)) { out = at::Scalar(PyFloat_AS_DOUBLE(o)); return 1; }
    int64_t value = 0;
    int taken = take(o, value);
    if (taken > 0) out = at::Scalar(value);
    return taken;
}
inline int take(PyObject* o, bool& out) {
    if (!PyBool_Check(o)) return 0;
    out = (o == Py_True);
    return 1;
}
inline int take(PyObject* o, std::string& out) {
    if (!PyUnicode_Check(o)) return 0;
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(o, &size);
    if (data == nullptr && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {
        // A lone surrogate (`"a\udcffb"`) has no UTF-8: not an error of the call (Python's body takes it), but no
        // value the compiled code can hold either, so the Python body runs.
        PyErr_Clear();
        return 0;
    }
    if (data == nullptr) return -1;
    out.assign(data, static_cast<size_t>(size));
    return 1;
}
inline int take(PyObject* o, at::ScalarType& out) { return ppy_bridge::unpack_dtype(o, out) ? 1 : 0; }
inline int take(PyObject* o, at::Device& out) { return ppy_bridge::unpack_device(o, out) ? 1 : 0; }
template <class T> inline int take(PyObject* o, std::optional<T>& out) {
    if (o == Py_None) { out.reset(); return 1; }
    T value = blank<T>();
    int taken = take(o, value);
    if (taken > 0) out = std::move(value);
    return taken;
}
// The items of a tuple or a list (PySequence_Fast's two kinds), each taken as its own type.
template <class T> inline int take_items(PyObject* o, std::vector<T>& out) {
    Py_ssize_t size = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    out.clear();
    out.reserve(static_cast<size_t>(size));
    for (Py_ssize_t i = 0; i < size; ++i) {
        out.push_back(blank<T>());  // not resize(): T may have no default (at::Device)
        int taken = take(items[i], out.back());
        if (taken <= 0) return taken;
    }
    return 1;
}
template <class T> inline int take(PyObject* o, std::vector<T>& out) {
    return PyTuple_Check(o) ? take_items(o, out) : 0;
}
// A `torch.Size` parameter takes a torch.Size alone: Python's value of a plain tuple would not be one (its slices,
// sums and the parameter itself returned are torch.Size in the region), so a tuple runs the Python body.
template <class T> inline int take_size(PyObject* o, std::vector<T>& out) {
    return ppy_bridge::is_size(o) ? take_items(o, out) : 0;
}
// A `Sequence[...]` parameter takes a list or a tuple, its items read alike (nothing a region does with it tells
// the two apart: the checker refuses what would).
template <class T> inline int take_sequence(PyObject* o, std::vector<T>& out) {
    return PyTuple_Check(o) || PyList_CheckExact(o) ? take_items(o, out) : 0;
}
// An Optional of either: None, or what `take_one` takes.
template <class T, class Take> inline int take_optional(PyObject* o, std::optional<std::vector<T>>& out, Take take_one) {
    if (o == Py_None) { out.reset(); return 1; }
    std::vector<T> value;
    int taken = take_one(o, value);
    if (taken > 0) out = std::move(value);
    return taken;
}
template <class T> inline int take_size(PyObject* o, std::optional<std::vector<T>>& out) {
    return take_optional(o, out, [](PyObject* item, std::vector<T>& value) { return take_size(item, value); });
}
template <class T> inline int take_sequence(PyObject* o, std::optional<std::vector<T>>& out) {
    return take_optional(o, out, [](PyObject* item, std::vector<T>& value) { return take_sequence(item, value); });
}
template <class Tuple, size_t... I> inline int take_items(PyObject* o, Tuple& out, std::index_sequence<I...>) {
    int result = 1;
    ((result > 0 ? (result = take(PyTuple_GET_ITEM(o, I), std::get<I>(out))) : 0), ...);
    return result;
}
template <class... T> inline int take(PyObject* o, std::tuple<T...>& out) {
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != static_cast<Py_ssize_t>(sizeof...(T))) return 0;
    return take_items(o, out, std::index_sequence_for<T...>{});
}

// --- Python objects out ---
inline PyObject* to_python(const at::Tensor& t) { return ppy_bridge::wrap_tensor(t); }
inline PyObject* to_python(int64_t v) { return PyLong_FromLongLong(v); }
inline PyObject* to_python(double v) { return PyFloat_FromDouble(v); }
inline PyObject* to_python(bool v) { return PyBool_FromLong(v); }
inline PyObject* to_python(const at::Scalar& v) {
    return is_int(v) ? PyLong_FromLongLong(v.toLong()) : PyFloat_FromDouble(v.toDouble());
}
// Decoded as str_bytes and string_literal encode: a literal's lone surrogate comes back as itself.
inline PyObject* to_python(const std::string& v) {
    return PyUnicode_DecodeUTF8(v.data(), static_cast<Py_ssize_t>(v.size()), "surrogatepass");
}
inline PyObject* to_python(at::ScalarType v) { return ppy_bridge::wrap_dtype(v); }
inline PyObject* to_python(const at::Device& v) { return ppy_bridge::wrap_device(v); }
template <class T> inline PyObject* to_python(const std::optional<T>& v);
template <class T> inline PyObject* to_python(const std::vector<T>& values);
template <class... T> inline PyObject* to_python(const std::tuple<T...>& values);
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
// NotImplemented: an argument is not exactly the type its annotation names; the caller runs the Python body.
inline PyObject* fallback() { Py_RETURN_NOTIMPLEMENTED; }

// The GIL is released while ATen works, as torch's own bindings do, and taken
// back on every way out, exceptions included.
struct WithoutGil {
    PyThreadState* state = PyEval_SaveThread();
    ~WithoutGil() { PyEval_RestoreThread(state); }
};

// --- where a region failed: its function stores the line of each statement in a local and, only
// when one raises, hands it here on the way out; the entry reads it once it has the exception ---
inline thread_local int failed_line = 0;
inline void failed_at(int line) noexcept { failed_line = line; }
inline int take_failed_line() noexcept { int line = failed_line; failed_line = 0; return line; }

// --- the no-grad fast path: whether autograd's layers would do nothing for this call ---
// Keys of a tensor, or of the thread, whose layers must see every op as the user's code would:
// transforms (vmap, functorch's grad), functionalization, tracing, Python dispatch (modes and
// subclasses), fake tensors, nested tensors. Any of them: the call takes the full dispatcher.
constexpr c10::DispatchKeySet foreign_keys({
    c10::DispatchKey::Fake, c10::DispatchKey::Python, c10::DispatchKey::FuncTorchDynamicLayerBackMode,
    c10::DispatchKey::Functionalize, c10::DispatchKey::NestedTensor, c10::DispatchKey::Tracer,
    c10::DispatchKey::FuncTorchBatched, c10::DispatchKey::BatchedNestedTensor, c10::DispatchKey::FuncTorchVmapMode,
    c10::DispatchKey::Batched, c10::DispatchKey::VmapMode, c10::DispatchKey::FuncTorchGradWrapper,
    c10::DispatchKey::PythonTLSSnapshot, c10::DispatchKey::FuncTorchDynamicLayerFrontMode,
    c10::DispatchKey::PreDispatch, c10::DispatchKey::PythonDispatcher});

struct AutogradIdle {
    bool grad = at::GradMode::is_enabled();
    bool operator()(const at::Tensor& t) const {
        if (!t.defined()) return true;
        const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
        return !impl->key_set().has_any(foreign_keys) && !(grad && impl->requires_grad());
    }
    template <class T> bool operator()(const std::optional<T>& v) const { return !v || (*this)(*v); }
    template <class T> bool operator()(const std::vector<T>& values) const {
        return std::all_of(values.begin(), values.end(), [this](const T& v) { return (*this)(v); });
    }
    template <class... T> bool operator()(const std::tuple<T...>& values) const {
        return std::apply([this](const T&... v) { return ((*this)(v) && ...); }, values);
    }
    template <class T> bool operator()(const T&) const { return true; }  // not a tensor
};

// True when no tensor argument requires grad (or grad mode is off), none carries a forward-mode
// tangent, and nothing above asks to see the ops: then the body can run below autograd.
template <class... T> inline bool autograd_idle(const T&... arguments) {
    AutogradIdle idle;
    if (c10::impl::tls_local_dispatch_key_set().included_.has_any(foreign_keys)) return false;
    return (idle(arguments) && ...) && !ppy_bridge::forward_ad_active();
}

}  // namespace ppy

#endif  // PPY_RUNTIME_H
