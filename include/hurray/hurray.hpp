// SPDX-License-Identifier: Apache-2.0
/// @file
/// The one include for users of `hurray::core` and `hurray::io`: descriptors,
/// views, dequantization, the narrow float types, and the HRRYFILE and
/// streaming formats, with the short path on top:
///
/// @code
/// #include <hurray/hurray.hpp>
///
/// std::vector<float> w = {1, 2, 3, 4, 5, 6};
/// hurray::Status saved = hurray::save("model.hrry", {{"w", hurray::TensorRef(w, {2, 3})}});
/// auto file = hurray::load("model.hrry");                       // Result<TensorFile>
/// auto values = file->tensor("w").as<float>();                  // zero-copy TypedBuffer<float>
/// @endcode
///
/// `hurray::net` (async streams, needs Asio) and `hurray::json` are separate
/// libraries with their own headers.
#pragma once

#include "hurray/core/builder.hpp"
#include "hurray/core/composite.hpp"
#include "hurray/core/composite_materialize.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/describe.hpp"
#include "hurray/core/descriptor_codec.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/element_of.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/float_types.hpp"
#include "hurray/core/lifetime.hpp"
#include "hurray/core/ggml_blocks.hpp"
#include "hurray/core/quantize.hpp"
#include "hurray/core/relayout.hpp"
#include "hurray/core/result.hpp"
#include "hurray/core/tensor_descriptor.hpp"
#include "hurray/core/tensor_ref.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/core/validate.hpp"
#include "hurray/core/version.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/byte_source.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/kv_metadata.hpp"
#include "hurray/io/range_source.hpp"
#include "hurray/io/read_only_file.hpp"
#include "hurray/io/save.hpp"
#include "hurray/io/sequential_file_reader.hpp"
#include "hurray/io/stream_convert.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/io/stream_writer.hpp"
#include "hurray/io/typed_buffer.hpp"
#include "hurray/io/tensor_file.hpp"
