// Tensor indexing for the region modules that index (`x[..., :n]`, `x[i] = v`) or pass lists of optional tensors
// (advanced indexing's `index`, `index_put`): included by a module.cpp only where its regions need it
// (ppy_compile/emit.py adds it), after ppy_runtime.h. ATen/TensorIndexing.h includes every op's header, and parsing
// it more than doubles a module's build, so the modules that do not index never include it.
#ifndef PPY_INDEXING_H
#define PPY_INDEXING_H

#include <ATen/TensorIndexing.h>
#include <ATen/core/List.h>
#include "ppy_runtime.h"

namespace ppy {

// `x[(...,) + (None,) * n]`: `n` Nones (none for n below 1, as Python's repeat), and the index joined around them.
inline ::std::vector<at::indexing::TensorIndex> nones(int64_t count) {
    return ::std::vector<at::indexing::TensorIndex>(static_cast<size_t>(count > 0 ? count : 0), at::indexing::None);
}
inline ::std::vector<at::indexing::TensorIndex> join_index(
        std::initializer_list<::std::vector<at::indexing::TensorIndex>> pieces) {
    ::std::vector<at::indexing::TensorIndex> out;
    for (const auto& piece : pieces) out.insert(out.end(), piece.begin(), piece.end());
    return out;
}
inline const at::Tensor& check_steps(const at::Tensor& self, std::initializer_list<at::indexing::TensorIndex> parts,
                                     std::initializer_list<std::pair<size_t, bool>> steps) {
    for (const auto& [position, zero] : steps) {
        if (!zero) continue;
        if (parts.size() > 1) {
            std::vector<at::indexing::TensorIndex> all(parts.begin(), parts.end());
            int64_t dims = self.dim();
            TORCH_CHECK_INDEX(at::indexing::impl::count_specified_dimensions(all) <= dims,
                              "too many indices for tensor of dimension ", dims);
            // The indices before the slice, tensors (checked only after every slice) standing as full slices.
            std::vector<at::indexing::TensorIndex> before;
            for (size_t i = 0; i < position; ++i) {
                const auto& part = all[i];
                if (!part.is_tensor()) { before.push_back(part); continue; }
                bool mask = part.tensor().scalar_type() == at::kBool || part.tensor().scalar_type() == at::kByte;
                for (int64_t d = 0; d < (mask ? part.tensor().dim() : 1); ++d) before.emplace_back(at::indexing::Slice());
            }
            if (!before.empty()) (void)self.index(before);
        }
        raise(PyExc_ValueError, "slice step cannot be zero");
    }
    return self;
}
inline c10::List<std::optional<at::Tensor>> optional_tensors(const std::vector<std::optional<at::Tensor>>& tensors) {
    c10::List<std::optional<at::Tensor>> out;
    for (const auto& t : tensors) out.push_back(t);
    return out;
}
inline c10::List<std::optional<at::Tensor>> optional_tensors(const std::vector<at::Tensor>& tensors) {
    c10::List<std::optional<at::Tensor>> out;
    for (const auto& t : tensors) out.push_back(t);
    return out;
}

template <class T> inline at::Tensor index_tensor(std::initializer_list<T> values) {
    // What Python makes of a list inside `[]`: a CPU tensor, int64 for ints and bool for bools.
    std::vector<T> copy(values);
    auto options = at::TensorOptions().dtype(std::is_same<T, bool>::value ? at::kBool : at::kLong);
    auto out = at::empty({static_cast<int64_t>(copy.size())}, options);
    for (size_t i = 0; i < copy.size(); ++i) out.index_put_({static_cast<int64_t>(i)}, at::Scalar(copy[i]));
    return out;
}

}  // namespace ppy

#endif  // PPY_INDEXING_H
