// What the bridge (bridge.cpp, built once per torch version as ppy_bridge.so) defines for the region
// modules, which link against it. Included by bridge.cpp itself and, through ppy_runtime.h, by every
// module: one declaration of each function, so the compiler checks that the definitions agree with what
// the modules call. Only the headers these declarations need are included here, so that the bridge's own build
// parses no more than it uses (ppy_includes.h is the modules' list).
#ifndef PPY_BRIDGE_H
#define PPY_BRIDGE_H

// Python.h first, as Python asks: it sets macros the standard headers read.
#include <Python.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace ppy_bridge {

// --- torch's Python objects (THPVariable, THPDevice, THPDtype), reached through torch's own API ---
bool unpack_tensor(PyObject* object, at::Tensor& out);
const at::Tensor* borrow_tensor(PyObject* object);
const at::Tensor* borrow_plain_tensor(PyObject* object);
PyObject* wrap_tensor(const at::Tensor& tensor);
bool unpack_device(PyObject* object, at::Device& out);
PyObject* wrap_device(const at::Device& device);
bool unpack_dtype(PyObject* object, at::ScalarType& out);
PyObject* wrap_dtype(at::ScalarType dtype);
PyObject* raise_current();
bool forward_ad_active();
bool is_size(PyObject* object);

// --- the call of a region object (bridge.cpp says what a region context holds) ---
int bind(PyObject* self, const char* region, PyObject* const* args, size_t nargsf, PyObject* kwnames,
         Py_ssize_t count, PyObject** out);
int names_current(PyObject* self);
PyObject* slow_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames);
PyObject* not_taken(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames);

// --- errors from inside a region ---
PyObject* located(PyObject* self, int offset);

}  // namespace ppy_bridge

#endif  // PPY_BRIDGE_H
