// The one include list of ppy's C++: the headers every region module and the bridge may rely on.
// Included by ppy_bridge.h (so by bridge.cpp and by every module, through ppy_runtime.h) and by the
// precompiled header (ppy_pch.h): a module built with the precompiled header and one built without it
// (-O0, PPY_PCH=0) see the same declarations, so the two cannot drift apart. An op's own header
// (ATen/ops/<op>.h) is not here: each module includes those of the ops it calls, which the
// precompiled header holds all of.
#ifndef PPY_INCLUDES_H
#define PPY_INCLUDES_H

// Python.h first, as Python asks: it sets macros the standard headers read.
#include <Python.h>
#include <ATen/core/LegacyTypeDispatch.h>
#include <ATen/core/List.h>
#include <ATen/core/Reduction.h>
#include <ATen/core/Tensor.h>
#include <ATen/ScalarOps.h>
#include <ATen/TensorIndexing.h>
#include <ATen/ops/empty.h>
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
