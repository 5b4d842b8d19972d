// einops.EinopsError for the region modules whose einops calls check their input's shape as einops does
// (PythonException.EINOPS_ERROR): included by a module.cpp only where a region raises it (the printer asks for
// it), after ppy_runtime.h. A failed check is `ppy::raise(ppy::einops_error(), message)`.
#ifndef PPY_EINOPS_H
#define PPY_EINOPS_H

#include "ppy_runtime.h"

namespace ppy {

// The class, found at the first failed check and kept (a class lives as long as its module): ATen runs without
// the GIL, so it is taken back. The region's Python body imported einops, so this import is a dict read; were
// einops gone all the same, the check raises EinopsError's base, RuntimeError, rather than nothing.
inline PyObject* einops_error_class = nullptr;
inline PyObject* einops_error() {
    PyGILState_STATE state = PyGILState_Ensure();
    if (einops_error_class == nullptr) {
        PyObject* module = PyImport_ImportModule("einops");
        PyObject* found = module == nullptr ? nullptr : PyObject_GetAttrString(module, "EinopsError");
        Py_XDECREF(module);
        if (found == nullptr || !PyExceptionClass_Check(found)) {
            Py_XDECREF(found);
            PyErr_Clear();
            found = nullptr;
        }
        // The import may have let another thread in, and it may have found the class first: keep one reference.
        if (einops_error_class == nullptr && found != nullptr) einops_error_class = found;
        else Py_XDECREF(found);
    }
    PyObject* type = einops_error_class != nullptr ? einops_error_class : PyExc_RuntimeError;
    PyGILState_Release(state);
    return type;
}

}  // namespace ppy

#endif  // PPY_EINOPS_H
