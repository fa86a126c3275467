// `hurray cat FILE NAME`: a tensor's values, printed the way NumPy prints arrays.
//
// FILE is an HRRYFILE or a stream (tensors named tensor_0, tensor_1, ...), or `-`; or a
// SafeTensors, GGUF, .npy or .npz file, read through hurray::convert (GGUF tensors kept as
// GGML blocks are quantized tensors like any other: hurray::dequantize knows their types).
// Values are dequantized (quantized tensors print as float32 via hurray::dequantize) and
// densified (sparse, paged, tiled, strided layouts read through TensorView); `--raw`
// prints the stored values instead (the integer codes of a quantized tensor). Composite
// heads of a file are materialized (FileTensor::materialize).
//   --index i,j   the sub-tensor [i, j, ...] (a prefix of the full index)
//   --limit N     at most N elements: a larger selection prints its first N elements,
//                 flattened in row-major order, followed by a line saying how many there are
#include <memory>
#include <ostream>
#include <sstream>

#include "hurray/commands.hpp"
#include "hurray/core/dequantize.hpp"
#include "hurray/core/element_convert.hpp"
#include "hurray/core/tensor_view.hpp"
#include "hurray/input.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/stream_reader.hpp"
#include "hurray/json_out.hpp"
#include "hurray/numpy_format.hpp"

#ifdef HURRAY_CLI_HAS_CONVERT
#include "hurray/convert/gguf.hpp"
#endif

namespace hurray::cli {
namespace {

constexpr uint64_t kMaxInMemory = uint64_t{1} << 32;
/// The most elements dequantized at once (the whole tensor is dequantized).
constexpr uint64_t kMaxDequantized = uint64_t{1} << 28;

struct CatOptions {
    std::string path;
    std::string name;
    std::string index;
    std::optional<uint64_t> limit;
    bool raw = false;
    RemoteOptions remote;
};

/// A failure: its exit status and message.
struct Failure {
    int status = kExitInvalid;
    std::string message;
};

/// Everything that must stay alive while the tensor is read.
struct Loaded {
    std::vector<uint8_t> memory;                    // a piped file
    std::unique_ptr<FileReader> reader;              // a file
    std::vector<SharedBuffer> buffers;               // the tensor's buffers
    std::unique_ptr<TensorDescriptor> descriptor;    // its descriptor (owned copy)
    std::vector<uint8_t> composite;                  // a materialized composite
#ifdef HURRAY_CLI_HAS_CONVERT
    std::unique_ptr<convert::TensorSource> source;   // a SafeTensors, GGUF or NumPy file
    ForeignTensorBytes bytes;                        // its tensor's buffers (views or copies)
#endif
};

std::string where(const Error& e) {
    std::string s;
    if (e.has_offset()) {
        s = "at byte " + std::to_string(e.offset()) + ": ";
    }
    return s + e.message() + " (" + std::string(error_code_name(e.code())) + ")";
}

std::optional<Failure> load_file(Input& in, const CatOptions& opt, Loaded& out) {
    Result<FileReader> reader = Error(ErrorCode::kIoError, "not opened");
    FileReadOptions o;
    o.descriptor = in.decode_options();
    if (in.is_remote()) {
        o.descriptors = DescriptorCheck::kLazy;  // one request for the descriptor, one for the data
        reader = FileReader::open(in.range_source(), o);
    } else if (in.is_regular_file() && opt.path != "-") {
        reader = FileReader::open(opt.path, o);
    } else {
        auto bytes = in.read_all(kMaxInMemory);
        if (!bytes) {
            return Failure{kExitInvalid, where(bytes.error())};
        }
        out.memory = std::move(*bytes);
        reader = FileReader::open_memory(out.memory, nullptr, o);
    }
    if (!reader) {
        return Failure{kExitInvalid, where(reader.error())};
    }
    out.reader = std::make_unique<FileReader>(std::move(*reader));
    const FileReader& r = *out.reader;
    auto i = r.find(opt.name);
    if (!i) {
        return Failure{kExitInvalid, "no tensor named \"" + opt.name + "\" (hurray ls lists them)"};
    }
    auto d = r.descriptor(*i);
    if (!d) {
        return Failure{kExitInvalid, where(d.error())};
    }
    out.descriptor = std::make_unique<TensorDescriptor>(**d);
    if (out.descriptor->layout_tag() != static_cast<uint8_t>(LayoutTag::kComposite)) {
        auto t = r.tensor(*i);
        if (!t) {
            return Failure{kExitInvalid, where(t.error())};
        }
        out.buffers.assign(t->buffers().begin(), t->buffers().end());
        return std::nullopt;
    }
    // A composite head: materialized from its members by the library.
    auto bytes = r.tensor(*i).materialize();
    if (!bytes) {
        return Failure{kExitInvalid, "composite \"" + opt.name + "\" cannot be materialized: " + where(bytes.error())};
    }
    out.composite = std::move(*bytes);
    // Read it back as a dense row-major tensor of the head's type and shape.
    TensorDescriptor dense;
    dense.element_type = out.descriptor->element_type;
    dense.shape = out.descriptor->shape;
    dense.extension_type = out.descriptor->extension_type;
    dense.buffers = {BufferHandle{.byte_size = out.composite.size()}};
    *out.descriptor = dense;
    out.buffers = {SharedBuffer(out.composite, nullptr)};
    return std::nullopt;
}

std::optional<Failure> load_stream(Input& in, const CatOptions& opt, Loaded& out) {
    uint64_t want = 0;
    const std::string prefix = "tensor_";
    const bool named = opt.name.rfind(prefix, 0) == 0 && opt.name.size() > prefix.size() &&
                       opt.name.find_first_not_of("0123456789", prefix.size()) == std::string::npos &&
                       opt.name.size() - prefix.size() <= 19;
    if (!named) {
        return Failure{kExitUsage, "tensors of a stream are named tensor_0, tensor_1, ...; got \"" + opt.name + "\""};
    }
    want = std::stoull(opt.name.substr(prefix.size()));
    StreamReader reader(in.source());
    for (;;) {
        auto t = reader.next();
        if (!t) {
            return Failure{kExitInvalid, where(t.error())};
        }
        if (*t == nullptr) {
            return Failure{kExitInvalid, "the stream has no " + opt.name};
        }
        if ((*t)->index != want) {
            auto st = reader.skip_data();
            if (!st) {
                return Failure{kExitInvalid, where(st.error())};
            }
            continue;
        }
        if ((*t)->descriptor.layout_tag() == static_cast<uint8_t>(LayoutTag::kComposite)) {
            return Failure{kExitInvalid, opt.name +
                                             " is a composite head: cat materializes composites of files only "
                                             "(hurray convert the stream to a file first)"};
        }
        out.descriptor = std::make_unique<TensorDescriptor>((*t)->descriptor);
        auto bufs = reader.read_tensor();
        if (!bufs) {
            return Failure{kExitInvalid, where(bufs.error())};
        }
        out.buffers = std::move(*bufs);
        return std::nullopt;
    }
}

#ifdef HURRAY_CLI_HAS_CONVERT
/// A tensor of a SafeTensors, GGUF, .npy or .npz file: its buffers, zero-copy where the
/// source maps them. GGML blocks are a quantized tensor like any other: printed
/// dequantized (core's dequantize knows them) unless --raw.
std::optional<Failure> load_foreign(Result<ForeignInput>& in, const CatOptions& opt, Loaded& out) {
    if (!in) {
        return Failure{kExitInvalid, where(unprefixed(opt.path, in.error()))};
    }
    out.source = std::move(in->source);
    const convert::TensorSource& src = *out.source;
    auto i = src.find(opt.name);
    if (!i) {
        return Failure{kExitInvalid, "no tensor named \"" + opt.name + "\" (hurray ls lists them)"};
    }
    const TensorDescriptor& d = src.tensor(*i).descriptor;
    if (data_bytes(d) > kMaxInMemory) {
        return Failure{kExitInvalid, opt.name + ": more than " + std::to_string(kMaxInMemory) + " bytes of data"};
    }
    auto bytes = read_foreign_tensor(src, *i, /*use_views=*/true, /*keep=*/true);
    if (!bytes) {
        return Failure{kExitInvalid, where(unprefixed(opt.path, bytes.error()))};
    }
    out.bytes = std::move(*bytes);
    out.descriptor = std::make_unique<TensorDescriptor>(d);
    for (const auto& span : out.bytes.spans) {
        out.buffers.emplace_back(span, nullptr);
    }
    return std::nullopt;
}
#endif

Result<std::vector<uint64_t>> parse_index(const std::string& text) {
    std::vector<uint64_t> out;
    if (text.empty()) {
        return out;
    }
    std::stringstream ss(text);
    std::string part;
    while (std::getline(ss, part, ',')) {
        if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 19) {
            return Error(ErrorCode::kInvalidArgument, "--index: \"" + part + "\" is not a non-negative integer");
        }
        out.push_back(std::stoull(part));
    }
    return out;
}

int64_t sign_extend(uint64_t bits, uint32_t width) {
    if (width >= 64) {
        return static_cast<int64_t>(bits);
    }
    const uint64_t sign = uint64_t{1} << (width - 1);
    const uint64_t mask = (uint64_t{1} << width) - 1;
    bits &= mask;
    return (bits & sign) != 0 ? static_cast<int64_t>(bits) - static_cast<int64_t>(uint64_t{1} << width)
                              : static_cast<int64_t>(bits);
}

int cat(const CatOptions& opt, const Console& console) {
    auto fail = [&](const Failure& f) {
        console.err << "hurray cat: " << (opt.path == "-" ? "<stdin>" : display_path(opt.path)) << ": " << f.message
                    << '\n';
        return f.status;
    };
    auto prefix = parse_index(opt.index);
    if (!prefix) {
        return fail({kExitUsage, prefix.error().message()});
    }
    Loaded loaded;
    std::optional<Failure> failed;
#ifdef HURRAY_CLI_HAS_CONVERT
    auto foreign = open_foreign(opt.path, opt.remote);
    if (foreign) {
        failed = load_foreign(*foreign, opt, loaded);
    }
#else
    const bool foreign = false;
#endif
    std::unique_ptr<Input> input;  // outlives the buffers read from it
    if (!foreign) {
        auto opened = Input::open(opt.path, console, opt.remote);
        if (!opened) {
            return fail({kExitInvalid, opened.error().message()});
        }
        input = std::move(*opened);
        Input& in = *input;
        switch (in.kind()) {
            case InputKind::kFile: failed = load_file(in, opt, loaded); break;
            case InputKind::kStream: failed = load_stream(in, opt, loaded); break;
            case InputKind::kDescriptor:
                failed = Failure{kExitInvalid, "a bare descriptor holds no values (hurray inspect describes it)"};
                break;
        }
    }
    if (failed) {
        return fail(*failed);
    }
    const TensorDescriptor& d = *loaded.descriptor;
    std::vector<std::span<const uint8_t>> spans;
    for (const auto& b : loaded.buffers) {
        spans.push_back(b.span());
    }
    auto view = TensorView::make(d, spans);
    if (!view) {
        return fail({kExitInvalid, opt.name + ": " + where(view.error())});
    }
    if (prefix->size() > d.shape.size()) {
        return fail({kExitUsage, "--index has " + std::to_string(prefix->size()) + " values, " + opt.name +
                                     " has rank " + std::to_string(d.shape.size())});
    }
    for (size_t k = 0; k < prefix->size(); ++k) {
        if ((*prefix)[k] >= d.shape[k]) {
            return fail({kExitUsage, "--index: " + std::to_string((*prefix)[k]) + " is out of range for dimension " +
                                         std::to_string(k) + " of size " + std::to_string(d.shape[k])});
        }
    }

    // How to read one element at a full index.
    ValueKind kind = ValueKind::kFloat;
    int float_bits = 32;
    FetchElement element;
    std::vector<float> dequantized;
    const ElementType t = d.element_type;
    if (d.quantization && !opt.raw) {
        uint64_t total = 1;
        for (uint64_t s : d.shape) {
            total = (s != 0 && total > kMaxDequantized / s) ? kMaxDequantized + 1 : total * s;
        }
        if (total > kMaxDequantized) {
            return fail({kExitInvalid, opt.name + ": too large to dequantize here (use --raw)"});
        }
        auto values = dequantize(*view);
        if (!values) {
            return fail({kExitInvalid, opt.name + ": " + where(values.error())});
        }
        dequantized = std::move(*values);
        element = [&](std::span<const uint64_t> idx) -> Result<Scalar> {
            uint64_t linear = 0;
            for (size_t k = 0; k < idx.size(); ++k) {
                linear = linear * d.shape[k] + idx[k];
            }
            return Scalar{dequantized[static_cast<size_t>(linear)], 0, 0};
        };
    } else if (t == ElementType::kFloat16) {
        float_bits = 16;
        element = [&](std::span<const uint64_t> idx) -> Result<Scalar> {
            HURRAY_ASSIGN_OR_RETURN(uint64_t bits, view->read_bits(idx));
            return Scalar{static_cast<double>(float16_to_float(static_cast<uint16_t>(bits))), 0, bits};
        };
    } else if (t == ElementType::kFloat64 || t == ElementType::kFloat32 || t == ElementType::kBFloat16 ||
               t == ElementType::kFloat8E4M3 || t == ElementType::kFloat8E5M2 || t == ElementType::kFloat8E8M0 ||
               t == ElementType::kFloat4E2M1 || t == ElementType::kFloat6E2M3 || t == ElementType::kFloat6E3M2) {
        float_bits = t == ElementType::kFloat64 ? 64 : 32;
        element = [&](std::span<const uint64_t> idx) -> Result<Scalar> {
            HURRAY_ASSIGN_OR_RETURN(double v, view->read_double(idx));
            return Scalar{v, 0, 0};
        };
    } else if (is_signed_integer(t) || is_unsigned_integer(t) || t == ElementType::kBool) {
        const bool is_signed = is_signed_integer(t);
        const uint32_t width = bit_width(t);
        kind = t == ElementType::kBool ? ValueKind::kBool : is_signed ? ValueKind::kSigned : ValueKind::kUnsigned;
        element = [&view, is_signed, width](std::span<const uint64_t> idx) -> Result<Scalar> {
            HURRAY_ASSIGN_OR_RETURN(uint64_t bits, view->read_bits(idx));
            return Scalar{0, is_signed ? sign_extend(bits, width) : 0, bits};
        };
    } else {
        const std::string_view n = type_name(t);
        return fail({kExitInvalid, opt.name + ": cat does not print element type " +
                                       (n.empty() ? "tag " + std::to_string(type_tag(t)) : std::string(n))});
    }

    // The selected sub-tensor, and --limit.
    std::vector<uint64_t> sub(d.shape.begin() + static_cast<std::ptrdiff_t>(prefix->size()), d.shape.end());
    uint64_t count = 1;
    for (uint64_t s : sub) {
        count = (s != 0 && count > UINT64_MAX / s) ? UINT64_MAX : count * s;
    }
    FetchElement fetch = [&](std::span<const uint64_t> idx) -> Result<Scalar> {
        std::vector<uint64_t> full(*prefix);
        full.insert(full.end(), idx.begin(), idx.end());
        return element(full);
    };
    NumpyOptions numpy;
    std::string note;
    if (opt.limit && count > *opt.limit) {
        const uint64_t n = *opt.limit;
        FetchElement inner = fetch;
        fetch = [inner, dims = sub](std::span<const uint64_t> flat) -> Result<Scalar> {
            std::vector<uint64_t> idx(dims.size());
            uint64_t k = flat[0];
            for (size_t a = dims.size(); a-- > 0;) {
                idx[a] = k % dims[a];
                k /= dims[a];
            }
            return inner(idx);
        };
        sub = {n};
        numpy.threshold = std::max(numpy.threshold, n);
        note = "(the first " + std::to_string(n) + " of " + std::to_string(count) + " elements, flattened)\n";
    }
    auto text = format_numpy(sub, kind, float_bits, fetch, numpy);
    if (loaded.reader) {
        // Values read from pages of a file truncated meanwhile are zeros: say so instead.
        if (auto s = loaded.reader->check_unchanged(); !s) {
            return fail({kExitInvalid, opt.name + ": " + where(s.error())});
        }
    }
    if (!text) {
        return fail({kExitInvalid, opt.name + ": " + where(text.error())});
    }
    console.out << *text << '\n' << note;
    return kExitOk;
}

}  // namespace

void add_cat(CLI::App& app, const Console& console, int* status) {
    auto opt = std::make_shared<CatOptions>();
    CLI::App* cmd = app.add_subcommand("cat", "Print a tensor's values the way NumPy prints arrays");
    cmd->add_option("file", opt->path,
                    "HRRYFILE, stream ('-': standard input), http(s):// or s3:// URL of either, SafeTensors, GGUF, .npy "
                    "or .npz file")
        ->required();
    cmd->add_option("name", opt->name, "tensor name (in a stream: tensor_0, tensor_1, ...)")->required();
    cmd->add_option("--index", opt->index, "prefix index i,j,...: print the sub-tensor [i, j, ...]");
    cmd->add_option("--limit", opt->limit, "print at most N elements (the first N, flattened)");
    cmd->add_flag("--raw", opt->raw, "stored values: no dequantization (the integer codes of quantized tensors)");
    add_remote_options(cmd, opt->remote);
    cmd->footer("Quantized tensors print dequantized (float32); sparse, paged, tiled and strided layouts print "
                "dense; composite heads of a file are materialized; GGUF tensors kept as GGML blocks print "
                "dequantized where hurray::dequantize_ggml has their type.\n"
                "Exit status: 0 ok, 1 invalid input or missing tensor, 2 usage (bad --index).");
    cmd->callback([opt, &console, status] { *status = cat(*opt, console); });
}

}  // namespace hurray::cli
