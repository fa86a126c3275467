// SPDX-License-Identifier: Apache-2.0
// TensorView addressing, reads and materialization (placeholder: the layout
// addressing lands in a following change).
#include "hurray/core/tensor_view.hpp"

namespace hurray {
namespace {

Error not_yet() { return {ErrorCode::kUnsupported, "view: element addressing is not implemented yet"}; }

}  // namespace

Result<ElementLocation> TensorView::locate(std::span<const uint64_t> /*index*/) const { return not_yet(); }
Result<uint64_t> TensorView::read_bits(std::span<const uint64_t> /*index*/) const { return not_yet(); }
Result<double> TensorView::read_double(std::span<const uint64_t> /*index*/) const { return not_yet(); }
Status TensorView::materialize(std::span<uint8_t> /*out*/) const { return not_yet(); }

}  // namespace hurray
