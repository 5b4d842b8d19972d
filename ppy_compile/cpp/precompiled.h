// The precompiled header's source: built once per torch version and compiler as ppy_pch.h.gch
// (ppy_compile/build.py, PCH), and the first line of every optimised region module
// (`#include "ppy_pch.h"`). It ships as precompiled.h, not as ppy_pch.h, so that a module's
// `#include "ppy_pch.h"` can only find the .gch beside the built copy, never this text.
// Parsing these headers is most of a module's build (a GPT-2 block builds in about 1.5 s from it
// against 5.4 s without); the price is a one-time build of about 17 s and some 400 MB in the cache.
// No include guard of its own: GCC compiles it as its main file, where a guard warns and does nothing.

#include "ppy_includes.h"
// Every op's declarations, so that whichever ops a module calls, their headers are already parsed.
#include <ATen/Functions.h>
