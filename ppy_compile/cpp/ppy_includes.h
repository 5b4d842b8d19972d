// The one include list of ppy's region modules: the headers every module may rely on. Included by
// ppy_runtime.h (so by every module) and by the precompiled header (ppy_pch.h): a module built with the
// precompiled header and one built without it see the same declarations, so the two cannot drift apart.
// Only headers at the level of ATen/core/Tensor.h belong here: a header that includes ATen/Functions.h
// (every op's declarations: ATen/ScalarOps.h, ATen/TensorIndexing.h) more than doubles the parse of a
// module built without the precompiled header, as the first module on a new machine is. An op's own
// header (ATen/ops/<op>_ops.h) is not here either: each module includes those of the ops it calls, and
// ppy_indexing.h where it indexes.
#ifndef PPY_INCLUDES_H
#define PPY_INCLUDES_H

// Python.h first, as Python asks: it sets macros the standard headers read.
#include <Python.h>
#include <ATen/core/IListRef.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/Reduction.h>
#include <ATen/core/Tensor.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/SymIntArrayRef.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#endif  // PPY_INCLUDES_H
