// The precompiled header's source: built once per torch version and compiler as ppy_pch.h.gch
// (ppy_compile/shared.py, PCH), and, once it is built, the first line of every optimised region module
// (`#include "ppy_pch.h"`). It ships as precompiled.h, not as ppy_pch.h, so that a module's
// `#include "ppy_pch.h"` can only find the .gch beside the built copy, never this text.
// Parsing torch's headers is most of a small module's build (about 3 s from this header against 7 s
// without, here); the price is a one-time build of about 17 s and some 400 MB in the cache, which is
// why no build waits for it: the first one on a new machine compiles without it and makes it after.
// No include guard of its own: GCC compiles it as its main file, where a guard warns and does nothing.

#include "ppy_includes.h"
// Every op's declarations, so that whichever ops a module calls, their headers are already parsed, and what
// ppy_indexing.h includes.
#include <ATen/Functions.h>
#include <ATen/TensorIndexing.h>
#include <ATen/core/List.h>
