// For benchmarks only: what one op costs beyond its kernel. Included by a module built with
// BuildOptions.repeat_entry (ppy_compile/unit.py), after ppy_runtime.h, which it uses; its
// `__ppy_probe` method row is the unit's. `__ppy_probe(which, count, tensor)` runs, count times:
// 0 `t.size(0)` (nothing); 1 `size.int` through the dispatcher (a trivial kernel: the dispatcher alone);
// 2 `alias` through the full dispatcher (autograd and ADInplaceOrView included); 3 `alias` below them;
// 4 as 3, then wrapped as a Python tensor and dropped (what a result costs the entry).
#ifndef PPY_PROBE_H
#define PPY_PROBE_H

#include "ppy_runtime.h"
#include <ATen/ops/alias_ops.h>
#include <ATen/ops/size_ops.h>

static PyObject* py_probe(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    int64_t which = 0, count = 0;
    const at::Tensor* t = nargs == 3 ? ppy_bridge::borrow_tensor(args[2]) : nullptr;
    if (t == nullptr || ppy::take(args[0], which) <= 0 || ppy::take(args[1], count) <= 0) {
        PyErr_SetString(PyExc_TypeError, "__ppy_probe(which: int, count: int, tensor)");
        return nullptr;
    }
    int64_t sizes = 0;
    for (int64_t i = 0; i < count; ++i) {
        if (which == 0) sizes += t->size(0);
        if (which == 1) sizes += at::_ops::size_int::call(*t, 0);
        if (which == 2) (void)at::_ops::alias::call(*t);
        if (which >= 3) {
            at::AutoDispatchBelowADInplaceOrView below;
            at::Tensor made = at::_ops::alias::call(*t);
            if (which == 4) {
                PyObject* wrapped = ppy::to_python(made);
                if (wrapped == nullptr) return nullptr;
                Py_DECREF(wrapped);
            }
        }
    }
    return PyLong_FromLongLong(sizes);
}

#endif  // PPY_PROBE_H
