// SPDX-License-Identifier: Apache-2.0
/// @file
/// The `_hurray` extension: `open` (a lazy file handle whose tensors are NumPy
/// arrays over the file's mapping) and `save` (NumPy arrays and KV metadata
/// to an HRRYFILE, atomically). The Python package `hurray` wraps it.
///
/// The GIL is released while files are opened, validated, read and written;
/// Python objects are only touched with it held.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "layout.hpp"
#include "common.hpp"
#include "wire.hpp"
#include "hurray/core/element_type.hpp"
#include "hurray/core/layout.hpp"
#include "hurray/core/quantization.hpp"
#include "hurray/core/shape.hpp"
#include "hurray/core/version.hpp"
#include "hurray/io/byte_sink.hpp"
#include "hurray/io/file_reader.hpp"
#include "hurray/io/file_writer.hpp"
#include "hurray/io/save.hpp"
#ifdef HURRAY_PY_HAVE_HTTP
#include "hurray/http/http_range_source.hpp"
#endif

namespace hurray::python {

py::dict describe_tensor(std::string_view name, const TensorDescriptor& d) {
    py::list shape;
    for (const uint64_t dim : d.shape) {
        shape.append(dim == kDynamicDim ? py::object(py::none()) : py::object(py::int_(dim)));
    }
    py::dict out;
    out["name"] = py::str(std::string(name));
    out["dtype"] = py::str(std::string(type_name(d.element_type)));
    const auto np_name = numpy_name(d.element_type);
    out["numpy_dtype"] = np_name ? py::object(py::str(*np_name)) : py::object(py::none());
    out["shape"] = py::tuple(shape);
    out["layout"] = py::str(std::string(python_layout_name(d.layout)));
    out["quantization"] = d.quantization
                              ? py::object(py::str(std::string(scheme_name(scheme_tag(d.quantization->scheme)))))
                              : py::object(py::none());
    uint64_t nbytes = 0;
    for (const BufferHandle& b : d.buffers) {
        nbytes += b.byte_size;  // each fits in the file: the sum cannot overflow
    }
    out["nbytes"] = py::int_(nbytes);
    out["buffer_count"] = py::int_(d.buffers.size());
    return out;
}

namespace {

/// The Hurray element type of a NumPy dtype (native byte order), or nothing.
std::optional<ElementType> element_type_of_dtype(const py::dtype& dt) {
    struct Entry {
        char kind;
        py::ssize_t size;
        ElementType type;
    };
    static constexpr Entry kTable[] = {  // NOLINT(*-avoid-c-arrays)
        {'b', 1, ElementType::kBool},      {'i', 1, ElementType::kInt8},       {'i', 2, ElementType::kInt16},
        {'i', 4, ElementType::kInt32},     {'i', 8, ElementType::kInt64},      {'u', 1, ElementType::kUInt8},
        {'u', 2, ElementType::kUInt16},    {'u', 4, ElementType::kUInt32},     {'u', 8, ElementType::kUInt64},
        {'f', 2, ElementType::kFloat16},   {'f', 4, ElementType::kFloat32},    {'f', 8, ElementType::kFloat64},
        {'c', 8, ElementType::kComplex64}, {'c', 16, ElementType::kComplex128},
    };
    const char kind = dt.kind();
    const py::ssize_t size = dt.itemsize();
    for (const Entry& e : kTable) {
        if (e.kind == kind && e.size == size) {
            return e.type;
        }
    }
    return std::nullopt;
}

/// The NumPy dtype that carries a tensor's elements: its own dtype, or, when
/// `bits` and NumPy has none, the unsigned integer of the element's width
/// (bfloat16 as uint16, float8 as uint8), for callers that reinterpret the
/// bits (`hurray.torch`). Nothing for types narrower than a byte or wider
/// than 64 bits.
std::optional<const char*> carrier_name(ElementType t, bool bits) noexcept {
    if (const auto name = numpy_name(t); name || !bits || is_sub_byte(t)) {
        return name;
    }
    switch (bit_width(t)) {
        case 8: return "uint8";
        case 16: return "uint16";
        case 32: return "uint32";
        case 64: return "uint64";
        default: return std::nullopt;
    }
}

std::string tensor_label(std::string_view name) { return "tensor '" + std::string(name) + "'"; }

/// `hurray.Composite._from_file(head, members, head_name, member_names)`,
/// registered by the package (`_set_composite_factory`); File.tensor builds
/// the composites of a file with it.
PyObject* g_composite_factory = nullptr;

/// Deeper nesting than this is refused while a file's composite is built
/// (the core's limit, 8, is far below it; this only bounds the recursion).
constexpr int kMaxCompositeNesting = 64;

void set_composite_factory(const py::handle& factory) { replace_kept_object(g_composite_factory, factory); }

/// Shape of a stored tensor as NumPy dimensions; raises when a dimension is
/// dynamic or beyond what NumPy can index.
std::vector<py::ssize_t> numpy_shape(std::span<const uint64_t> shape, std::string_view name) {
    std::vector<py::ssize_t> out;
    out.reserve(shape.size());
    for (const uint64_t d : shape) {
        if (d == kDynamicDim) {
            raise_kind(PythonError::kUnsupported, tensor_label(name) + ": has a dynamic dimension; it has no array form");
        }
        if (d > static_cast<uint64_t>(std::numeric_limits<py::ssize_t>::max())) {
            raise_kind(PythonError::kBuffer, tensor_label(name) + ": dimension " + std::to_string(d) + " is too large");
        }
        out.push_back(static_cast<py::ssize_t>(d));
    }
    return out;
}

/// Marks an array read-only: it views a read-only mapping (or shared data).
void make_read_only(py::array& a) { a.attr("flags").attr("writeable") = false; }

/// What `File::read` produced without the GIL.
struct ReadOutcome {
    std::optional<FileTensor> tensor;                     // zero-copy path: keeps the mapping alive
    std::span<const uint8_t> bytes;                       // the data in the mapping (zero-copy path)
    std::unique_ptr<std::vector<uint8_t>> owned;          // copy path: materialized bytes
    bool is_bool = false;                                 // `owned` holds one byte per bool
    std::optional<Error> error;                           // the failure, raised with the GIL
};

/// A lazy handle to an opened file (`hurray.open`). Closing it drops the
/// handle; arrays already handed out keep the mapping alive on their own.
class File {
public:
    File(FileReader reader, std::string path, bool writable = false)
        : reader_(std::move(reader)), path_(std::move(path)), writable_(writable) {}

    /// Opens `path`. `writable`: the file is mapped copy-on-write and
    /// get_tensor returns writable arrays whose writes stay in this process
    /// (copies when the file could not be mapped). `spec_only`: read by the
    /// spec alone, refusing libhurray's own private schemes (GGML blocks).
    static File open(const std::filesystem::path& path, bool writable, bool spec_only) {
        FileReadOptions options;
        options.copy_on_write = writable;
        options.descriptor.libhurray_schemes = !spec_only;
        std::optional<Result<FileReader>> opened;
        {
            const py::gil_scoped_release release;
            opened.emplace(FileReader::open(path, options));
        }
        if (!*opened) {
            raise_error(opened->error(), PythonSite::kOpen, Site{.label = path.string(), .file = path.string()});
        }
        return {std::move(opened->value()), path.string(), writable};
    }

    /// Opens the HRRYFILE at `url` (http, https or s3://) with range requests
    /// (HttpRangeSource): the sections and descriptors at open, each tensor's
    /// bytes when first read. `headers`: extra request headers ("Name: value",
    /// e.g. an Authorization); `timeout`: seconds without progress before a
    /// request fails (0: libhurray's default); `aws`: SigV4 credentials
    /// (AwsCredentials' fields by name); `endpoint`: where s3:// URLs go.
    static File open_url(const std::string& url, const std::vector<std::string>& headers, double timeout,
                         bool spec_only, const std::optional<std::map<std::string, std::string>>& aws,
                         const std::string& endpoint, bool writable) {
#ifdef HURRAY_PY_HAVE_HTTP
        http::HttpOptions http;
        http.headers = headers;
        if (aws) {
            // AWS Signature Version 4: the keys of hurray::http::AwsCredentials; the
            // region, when not given, the environment's (AWS_REGION, ...), as in C.
            http::AwsCredentials c;
            if (auto env = http::S3Location::from_environment(); env.ok()) {
                c.region = env->region;
            }
            for (const auto& [key, value] : *aws) {
                if (key == "access_key_id") {
                    c.access_key_id = value;
                } else if (key == "secret_access_key") {
                    c.secret_access_key = value;
                } else if (key == "session_token") {
                    c.session_token = value;
                } else if (key == "region") {
                    c.region = value;
                } else if (key == "service") {
                    c.service = value;
                } else {
                    raise_kind(PythonError::kInvalidArgument,
                               "open_url: aws has an unknown key '" + key +
                                   "' (access_key_id, secret_access_key, session_token, region, service)");
                }
            }
            http.aws = std::move(c);
        }
        // Ctrl-C during a transfer: Python's signal handlers run every 100 ms
        // (the GIL taken); one that raises cancels the transfer, and its
        // exception (KeyboardInterrupt) is what the call raises.
        http.progress = [last = std::make_shared<std::atomic<int64_t>>(0)](uint64_t) {
            const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now().time_since_epoch())
                                    .count();
            int64_t before = last->load(std::memory_order_relaxed);
            if (now - before < 100 || !last->compare_exchange_strong(before, now, std::memory_order_relaxed)) {
                return true;
            }
            const py::gil_scoped_acquire acquire;
            return PyErr_CheckSignals() == 0;
        };
        if (!endpoint.empty()) {
            auto at = http::S3Location::from_environment();
            if (!at) {
                raise_kind(PythonError::kInvalidArgument, "open_url: " + at.error().message());
            }
            at->endpoint = endpoint;
            if (http.aws) {
                at->region = http.aws->region;
            }
            http.s3 = *at;
        }
        if (timeout < 0) {
            raise_kind(PythonError::kInvalidArgument, "open_url: timeout must not be negative");
        }
        if (timeout > 0) {
            http.idle_timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout * 1000.0));
        }
        FileReadOptions options;
        options.descriptor.libhurray_schemes = !spec_only;
        const std::string shown = http::HttpRangeSource::display_url(url);
        std::optional<Result<FileReader>> opened;
        {
            const py::gil_scoped_release release;
            auto source = http::HttpRangeSource::open(url, http);
            if (!source) {
                opened.emplace(source.error());
            } else {
                opened.emplace(FileReader::open(std::move(*source), options));
            }
        }
        if (!*opened) {
            const Site site{.label = shown, .file = shown};
            if (opened->error().code() == ErrorCode::kInvalidArgument) {
                raise_error_as(PythonError::kInvalidArgument, opened->error(), site);  // a bad URL or header
            }
            raise_error(opened->error(), PythonSite::kOpen, site);
        }
        // writable: get_tensor gives private copies of the downloaded bytes (the
        // reader's cache is shared by every call), as for a file read without a mapping.
        return {std::move(opened->value()), shown, writable};
#else
        static_cast<void>(url);
        static_cast<void>(headers);
        static_cast<void>(timeout);
        static_cast<void>(spec_only);
        static_cast<void>(aws);
        static_cast<void>(endpoint);
        static_cast<void>(writable);
        raise_kind(PythonError::kUnsupported, "this hurray module was built without hurray::http (no URL support)");
#endif
    }

    /// Whether get_tensor returns writable arrays (opened with writable=True).
    [[nodiscard]] bool writable() const { return writable_; }

    void close() { reader_.reset(); }
    [[nodiscard]] bool closed() const { return !reader_.has_value(); }
    [[nodiscard]] const std::string& path() const { return path_; }

    [[nodiscard]] bool mapped() const { return reader().mapped(); }

    /// Tensor names in the order they were written.
    [[nodiscard]] py::list keys() const {
        const FileReader& r = reader();
        py::list out;
        for (const size_t i : r.write_order()) {
            out.append(py::str(r.entry(i).name));
        }
        return out;
    }

    [[nodiscard]] bool contains(const std::string& name) const { return reader().find(name).has_value(); }
    [[nodiscard]] size_t size() const { return reader().tensor_count(); }

    [[nodiscard]] py::dict metadata() const { return kv_to_python(reader().kv()); }

    /// The index of the tensor `name`; KeyError for a name the file lacks. Every lookup by name goes through it.
    [[nodiscard]] static size_t index_of(const FileReader& r, const std::string& name) {
        const std::optional<size_t> index = r.find(name);
        if (!index) {
            throw py::key_error(name);
        }
        return *index;
    }

    /// The index of the tensor `name` and its decoded descriptor (the
    /// reader keeps it); KeyError for a name the file lacks, the library's
    /// error for a descriptor that does not decode. The GIL is released
    /// while it decodes.
    [[nodiscard]] std::pair<size_t, const TensorDescriptor&> find_descriptor(const FileReader& r,
                                                                            const std::string& name) const {
        const size_t index = index_of(r, name);
        std::optional<Result<const TensorDescriptor*>> decoded;
        {
            const py::gil_scoped_release release;
            decoded.emplace(r.descriptor(index));
        }
        if (!*decoded) {
            raise_error(decoded->error(), PythonSite::kTensor, Site{.label = path_ + ": " + tensor_label(name), .file = path_, .tensor = name});
        }
        return {index, *decoded->value()};
    }

    /// What the index and the descriptor say about a tensor; reads no data.
    /// The descriptor is decoded into a local copy (FileReader::decode_descriptor),
    /// not kept by the reader: listing a file with info() costs no memory per tensor.
    [[nodiscard]] py::dict info(const std::string& name) const {
        const FileReader r = reader();
        const size_t index = index_of(r, name);
        TensorDescriptor d;
        std::optional<Status> decoded;
        {
            const py::gil_scoped_release release;
            decoded.emplace(r.decode_descriptor(index, d));
        }
        if (!*decoded) {
            raise_error(decoded->error(), PythonSite::kTensor, Site{.label = path_ + ": " + tensor_label(name), .file = path_, .tensor = name});
        }
        const IndexEntry& e = r.entry(index);
        py::dict out = describe_tensor(e.name, d);
        out["nbytes"] = py::int_(e.data_length);
        out["data_offset"] = py::int_(e.data_offset);
        return out;
    }

    /// The tensor as a read-only NumPy array: a view of the mapping when its
    /// data is dense row-major bytes, else a copy (bool, other layouts,
    /// composites).
    [[nodiscard]] py::array get_tensor(const std::string& name) const { return array_of(name, false); }

    /// (array, element type name): like get_tensor, but a tensor whose element
    /// type NumPy lacks (bfloat16, float8) comes as the unsigned integers of
    /// its width holding its bits; the name says what they are.
    [[nodiscard]] py::tuple get_bits(const std::string& name) const {
        ElementType type{};
        py::array a = array_of(name, true, &type);
        return py::make_tuple(std::move(a), std::string(type_name(type)));
    }

    /// get_tensor (`bits` false) or get_bits (true); stores the tensor's
    /// element type in `*type` when given.
    [[nodiscard]] py::array array_of(const std::string& name, bool bits, ElementType* type = nullptr) const {
        const FileReader r = reader();  // a share: close() on another thread cannot pull the file away
        const size_t index = index_of(r, name);
        ReadOutcome out;
        {
            const py::gil_scoped_release release;
            out = read(r, index, bits);
            if (!out.error && writable_ && !out.owned && !r.copy_on_write()) {
                // Writable arrays over memory that must not be written (the
                // pread fallback's cache): a private copy instead.
                out.owned = std::make_unique<std::vector<uint8_t>>(out.bytes.begin(), out.bytes.end());
            }
        }
        const std::string context = path_ + ": " + tensor_label(name);
        if (out.error) {
            raise_error(*out.error, PythonSite::kTensor, context);
        }
        const FileTensor& t = *out.tensor;
        if (type != nullptr) {
            *type = t.element_type();
        }
        const auto np_name = carrier_name(t.element_type(), bits);
        const py::dtype dt(*np_name);
        const std::vector<py::ssize_t> shape = numpy_shape(t.shape(), name);

        const std::span<const uint8_t> data =
            out.owned ? std::span<const uint8_t>(*out.owned) : out.bytes;
        // The readers checked the byte count against the shape; check again
        // that the array cannot reach past the data.
        uint64_t count = 1;
        for (const uint64_t d : t.shape()) {
            if (d != 0 && count > std::numeric_limits<uint64_t>::max() / d) {
                raise_kind(PythonError::kBuffer, context + ": element count overflows");
            }
            count *= d;
        }
        const auto item = static_cast<uint64_t>(dt.itemsize());
        if (count > std::numeric_limits<uint64_t>::max() / item || count * item != data.size()) {
            raise_kind(PythonError::kBuffer, context + ": " + std::to_string(data.size()) + " data bytes for " +
                                               std::to_string(count) + " elements of " + std::to_string(item) +
                                               " bytes");
        }
        if (data.empty()) {
            py::array a(dt, shape);
            if (!writable_) {
                make_read_only(a);
            }
            return a;
        }
        py::capsule owner;
        if (out.owned) {
            auto* keep = out.owned.release();
            owner = py::capsule(keep, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
        } else {
            auto* keep = new FileTensor(std::move(*out.tensor));
            owner = py::capsule(keep, [](void* p) { delete static_cast<FileTensor*>(p); });
        }
        // SAFETY: `data` holds exactly count * itemsize bytes (checked above),
        // C-contiguous for this shape, aligned for the dtype (mapped data
        // offsets are aligned by the format; vectors are allocated with new);
        // `owner` (the array's base) keeps the FileTensor, and through it the
        // mapping, or the vector alive for as long as the array or a view of it
        // lives. NumPy takes a non-const pointer but the array is made
        // read-only before it is returned, unless the file is writable: then
        // the data is an owned vector or a copy-on-write mapping
        // (FileReader::copy_on_write, checked above), whose writes land in
        // private pages and never reach the file.
        py::array a(dt, shape, {}, static_cast<const void*>(data.data()), owner);
        if (!writable_) {
            make_read_only(a);
        }
        return a;
    }

    /// The tensor as a `hurray.Tensor` viewing the file's memory (any layout,
    /// quantization or element type; a composite head is assembled).
    [[nodiscard]] py::object tensor(const std::string& name) const {
        const FileReader r = reader();
        const size_t index = index_of(r, name);
        std::optional<FileTensorResult> t;
        {
            const py::gil_scoped_release release;
            t.emplace(r.tensor(index));
        }
        if (!*t) {
            raise_error(t->error(), PythonSite::kTensor, Site{.label = path_ + ": " + tensor_label(name), .file = path_, .tensor = name});
        }
        if (t->value().is_composite() && g_composite_factory != nullptr) {
            return composite(r, index, 0);
        }
        return tensor_from_file(t->value());
    }

    /// The names of the direct members of the composite named `name`, in
    /// file order, or None when it is not a composite head.
    [[nodiscard]] py::object member_names(const std::string& name) const {
        const FileReader r = reader();
        const auto [index, d] = find_descriptor(r, name);
        if (!std::holds_alternative<CompositeLayout>(d.layout)) {
            return py::none();
        }
        std::optional<Result<FileComposite>> comp;
        {
            const py::gil_scoped_release release;
            comp.emplace(r.composite(index));
        }
        if (!*comp) {
            raise_error(comp->error(), PythonSite::kTensor, Site{.label = path_ + ": " + tensor_label(name), .file = path_, .tensor = name});
        }
        py::list out;
        for (const size_t m : comp->value().members) {
            out.append(py::str(r.entry(m).name));
        }
        return out;
    }

    /// Every element as float32 (a new array, row-major), for any tensor:
    /// dequantized, densified, converted from its element type (bfloat16,
    /// float8, sub-byte integers, ...).
    [[nodiscard]] py::array to_float32(const std::string& name) const {
        const FileReader r = reader();
        const size_t index = index_of(r, name);
        std::optional<Error> error;
        std::unique_ptr<std::vector<float>> values;
        std::vector<uint64_t> dims;
        {
            const py::gil_scoped_release release;
            FileTensorResult t = r.tensor(index);
            auto converted = t.to_float32();
            if (!converted) {
                error = converted.error();
            } else {
                values = std::make_unique<std::vector<float>>(std::move(*converted));
                dims.assign(t.value().shape().begin(), t.value().shape().end());
            }
        }
        const std::string context = path_ + ": " + tensor_label(name);
        if (error) {
            raise_error(*error, PythonSite::kTensor, context);
        }
        return float_array(std::move(*values), dims, PythonError::kBuffer, context);
    }

    /// Where the tensor's data lies in memory (address, bytes) when it can be
    /// viewed without a copy; for tests of zero-copy loading.
    [[nodiscard]] py::object data_range(const std::string& name) const {
        const FileReader r = reader();
        const size_t index = index_of(r, name);
        auto bytes = r.tensor(index).bytes();
        if (!bytes) {
            return py::none();
        }
        // SAFETY: only the address is reported, as an integer; nothing is read.
        return py::make_tuple(reinterpret_cast<uintptr_t>(bytes->data()), bytes->size());
    }

private:
    /// The composite whose head is tensor `head` as a `hurray.Composite`: its
    /// members are Tensors over the mapping (nested heads, composites).
    // NOLINTNEXTLINE(misc-no-recursion): bounded by kMaxCompositeNesting (and the core's 8 levels)
    [[nodiscard]] py::object composite(const FileReader& r, size_t head, int depth) const {
        const std::string context = path_ + ": " + tensor_label(r.entry(head).name);
        if (depth > kMaxCompositeNesting) {
            raise_kind(PythonError::kInvalidDescriptor, context + ": composites nested more than " +
                                                          std::to_string(kMaxCompositeNesting) + " deep");
        }
        std::optional<Result<FileComposite>> comp;
        std::optional<Result<SharedBuffer>> head_bytes;
        {
            const py::gil_scoped_release release;
            comp.emplace(r.composite(head));
            head_bytes.emplace(r.descriptor_bytes(head));
        }
        if (!*comp) {
            raise_error(comp->error(), PythonSite::kTensor, context);
        }
        if (!*head_bytes) {
            raise_error(head_bytes->error(), PythonSite::kTensor, context);
        }
        const std::span<const uint8_t> hb = head_bytes->value().span();
        // SAFETY: char may alias the descriptor's bytes, which the SharedBuffer
        // keeps alive here; py::bytes copies them.
        py::bytes head_object(reinterpret_cast<const char*>(hb.data()), hb.size());
        py::list members;
        py::list names;
        for (const size_t m : comp->value().members) {
            std::optional<FileTensorResult> t;
            {
                const py::gil_scoped_release release;
                t.emplace(r.tensor(m));
            }
            if (!*t) {
                raise_error(t->error(), PythonSite::kTensor, Site{.label = path_ + ": " + tensor_label(r.entry(m).name), .file = path_, .tensor = r.entry(m).name});
            }
            names.append(py::str(r.entry(m).name));
            members.append(t->value().is_composite() ? composite(r, m, depth + 1) : tensor_from_file(t->value()));
        }
        return py::reinterpret_borrow<py::object>(g_composite_factory)(head_object, members,
                                                                       py::str(r.entry(head).name), names);
    }

    [[nodiscard]] const FileReader& reader() const {
        if (!reader_) {
            throw py::value_error("I/O operation on a closed hurray file: " + path_);
        }
        return *reader_;
    }

    /// Reads tensor `index` (no GIL held: no Python object is touched).
    static ReadOutcome read(const FileReader& r, size_t index, bool bits) {
        ReadOutcome out;
        FileTensorResult t = r.tensor(index);
        if (!t) {
            out.error = t.error();
            return out;
        }
        const FileTensor& ft = t.value();
        const TensorDescriptor& d = ft.descriptor();
        if (d.quantization) {
            out.error = Error(ErrorCode::kUnsupported,
                              "quantized (" + std::string(scheme_name(scheme_tag(d.quantization->scheme))) +
                                  "): loading it as an array is not supported yet (use info() to inspect it)");
            return out;
        }
        if (!carrier_name(d.element_type, bits)) {
            out.error = Error(ErrorCode::kUnsupported, "element type " + std::string(type_name(d.element_type)) +
                                                           " has no NumPy dtype; not supported yet");
            return out;
        }
        if (d.element_type == ElementType::kBool) {
            auto packed = ft.materialize();
            if (!packed) {
                out.error = packed.error();
                return out;
            }
            uint64_t count = 1;
            for (const uint64_t dim : d.shape) {
                if (dim == kDynamicDim || (dim != 0 && count > std::numeric_limits<uint64_t>::max() / dim)) {
                    out.error = Error(ErrorCode::kSizeOverflow, "element count overflows");
                    return out;
                }
                count *= dim;
            }
            if (count > packed->size() * 8U) {
                out.error = Error(ErrorCode::kSizeMismatch, std::to_string(packed->size()) +
                                                                " packed bytes cannot hold " + std::to_string(count) +
                                                                " bools");
                return out;
            }
            auto unpacked = std::make_unique<std::vector<uint8_t>>(count);
            for (uint64_t i = 0; i < count; ++i) {
                (*unpacked)[i] = static_cast<uint8_t>(((*packed)[i / 8] >> (i % 8)) & 1U);  // LSB first
            }
            out.owned = std::move(unpacked);
            out.is_bool = true;
            out.tensor.emplace(ft);
            return out;
        }
        auto bytes = ft.bytes();
        if (bytes) {
            out.bytes = *bytes;
            out.tensor.emplace(ft);
            return out;
        }
        // Not plain dense bytes (another layout, a composite head): a copy.
        auto all = ft.materialize();
        if (!all) {
            out.error = all.error();
            return out;
        }
        out.owned = std::make_unique<std::vector<uint8_t>>(std::move(*all));
        out.tensor.emplace(ft);
        return out;
    }

    std::optional<FileReader> reader_;
    std::string path_;
    bool writable_ = false;
};

/// A composite to save: its head and its members in pre-order (nested heads
/// included), each with its name in the file.
struct PreparedComposite {
    std::string_view name;             // the head's name (refers to the caller's names)
    TensorDescriptor head;
    std::vector<std::string> member_names;
    std::vector<PreparedTensor> members;  // buffers held through the buffer protocol
};

/// The tensors of a save, in the order given: `TensorRef`s over the arrays,
/// which `keep` holds, and composites.
struct Prepared {
    std::vector<py::array> keep;  // references held while the file is written
    std::vector<py::object> keep_tensors;  // hurray.Tensor values, held likewise
    std::vector<std::variant<NamedTensor, PreparedComposite>> items;
    KvMetadata metadata;
};

/// Prepares composite `name` given by the package as (head descriptor bytes,
/// [(member name, descriptor bytes, buffers), ...] in pre-order).
PreparedComposite prepare_composite(std::string_view name, const py::handle& value) {
    const auto parts = py::reinterpret_borrow<py::tuple>(value);
    const std::string what = tensor_label(name);
    if (py::len(parts) != 2) {
        throw py::type_error(what + ": a composite is passed as (head, members)");
    }
    PreparedComposite c;
    c.name = name;
    c.head = decode_for_write(py::bytes(parts[0]), what + " (composite head)");
    if (!std::holds_alternative<CompositeLayout>(c.head.layout)) {
        raise_kind(PythonError::kInvalidArgument, what + ": the head's layout is not composite");
    }
    const auto members = py::reinterpret_borrow<py::sequence>(parts[1]);
    const auto n = static_cast<size_t>(py::len(members));
    c.member_names.reserve(n);
    c.members.reserve(n);
    for (const py::handle m : members) {
        const auto triple = py::reinterpret_borrow<py::sequence>(m);
        if (py::len(triple) != 3) {
            throw py::type_error(what + ": each composite member is passed as (name, descriptor, buffers)");
        }
        if (!py::isinstance<py::str>(triple[0])) {
            throw py::type_error(what + ": composite member names must be str");
        }
        c.member_names.push_back(py::cast<std::string>(triple[0]));
        c.members.push_back(prepare_tensor(py::bytes(triple[1]), py::sequence(triple[2]),
                                           what + ", member '" + c.member_names.back() + "'"));
    }
    return c;
}

/// Checks and wraps `names[i]` -> `arrays[i]` (C-contiguous, native byte
/// order; the package makes them so) and the KV. `names` must outlive the
/// result (the tensors refer to its strings).
/// `types` (None, or a list as long as `names` of None or a Hurray type name)
/// stores array i's bytes as that element type instead of its dtype's (for
/// types NumPy lacks, such as bfloat16 carried as uint16).
Prepared prepare(const std::vector<std::string>& names, const py::list& arrays, const py::object& kv,
                 const py::object& types = py::none()) {
    if (names.size() != py::len(arrays)) {
        throw py::value_error("save: names and arrays differ in length");
    }
    if (!types.is_none() && py::len(types) != names.size()) {
        throw py::value_error("save: names and types differ in length");
    }
    Prepared prepared;
    std::vector<py::array>& keep = prepared.keep;
    auto& items = prepared.items;
    keep.reserve(names.size());
    items.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names[i];
        if (py::isinstance<py::tuple>(arrays[i])) {
            // A hurray.Composite, flattened by the package.
            items.emplace_back(prepare_composite(name, arrays[i]));
            continue;
        }
        if (auto ref = tensor_ref_of(arrays[i])) {
            // A hurray.Tensor: its descriptor and every buffer, as they are.
            items.emplace_back(NamedTensor{name, std::move(*ref)});
            prepared.keep_tensors.push_back(py::reinterpret_borrow<py::object>(arrays[i]));
            continue;
        }
        if (!py::isinstance<py::array>(arrays[i])) {
            throw py::type_error(tensor_label(name) + ": not a numpy.ndarray");
        }
        auto a = py::reinterpret_borrow<py::array>(arrays[i]);
        const py::dtype dt = a.dtype();
        auto type = element_type_of_dtype(dt);
        if (!types.is_none() && !types[py::int_(i)].is_none()) {
            const std::string wanted = py::str(types[py::int_(i)]);
            const auto named = type_from_name(wanted);
            if (!type || !named || *named == ElementType::kBool || is_sub_byte(*named) ||
                bit_width(*named) != static_cast<uint64_t>(dt.itemsize()) * 8U) {
                raise_kind(PythonError::kInvalidArgument, tensor_label(name) + ": cannot store " +
                                                            std::to_string(dt.itemsize()) + "-byte elements as '" +
                                                            wanted + "'");
            }
            type = named;
        }
        if (!type) {
            raise_kind(PythonError::kUnsupported,
                       tensor_label(name) + ": dtype " + std::string(py::str(static_cast<const py::handle&>(dt))) + " has no Hurray element type");
        }
        const std::string order = py::str(dt.attr("byteorder"));
        if (order == ">") {
            raise_kind(PythonError::kInvalidArgument, tensor_label(name) + ": big-endian dtype; convert it to native order");
        }
        if ((a.flags() & py::array::c_style) == 0) {
            raise_kind(PythonError::kInvalidArgument, tensor_label(name) + ": not C-contiguous");
        }
        Shape shape;
        shape.reserve(static_cast<size_t>(a.ndim()));
        for (py::ssize_t k = 0; k < a.ndim(); ++k) {
            shape.push_back(static_cast<uint64_t>(a.shape(k)));
        }
        const auto nbytes = static_cast<size_t>(a.nbytes());
        if (*type == ElementType::kBool) {
            // NumPy bools are bytes that should be 0 or 1; normalise them rather
            // than read another byte value as a C++ bool. The TensorRef packs
            // them into storage it owns, so `values` may go right after.
            const auto count = static_cast<size_t>(a.size());
            std::unique_ptr<bool[]> values(new bool[count]);  // NOLINT(*-avoid-c-arrays)
            // SAFETY: a C-contiguous array of `count` one-byte bools: its data
            // pointer covers `count` bytes; uint8_t may read any byte.
            const auto* src = static_cast<const uint8_t*>(a.data());
            for (size_t k = 0; k < count; ++k) {
                values[k] = src[k] != 0;
            }
            items.emplace_back(NamedTensor{name, TensorRef(std::span<const bool>(values.get(), count), std::move(shape))});
        } else {
            // SAFETY: a C-contiguous array's data covers nbytes() bytes; `keep`
            // holds a reference to the array until the file is written.
            const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(a.data()), nbytes);
            items.emplace_back(NamedTensor{name, TensorRef::from_bytes(*type, std::move(shape), bytes)});
        }
        keep.push_back(std::move(a));
    }
    prepared.metadata = kv_from_python(kv);
    return prepared;
}

/// `e` with "tensor 'name': " before its message.
Error for_tensor(std::string_view name, const Error& e) {
    return {e.code(), tensor_label(name) + ": " + e.message(), e.offset()};
}

/// Writes the prepared tensors and composites, in order, and the KV with
/// `writer`, then finishes it (what `hurray::save` does, plus composites).
Status write_prepared(FileWriter& writer, const Prepared& prepared) {
    writer.kv() = prepared.metadata;
    std::vector<FileTensorInput> inputs;
    for (const auto& item : prepared.items) {
        if (const auto* t = std::get_if<NamedTensor>(&item)) {
            auto d = t->tensor.descriptor();
            if (!d) {
                return for_tensor(t->name, d.error());
            }
            if (auto st = writer.add_tensor(t->name, *d, t->tensor.buffers()); !st) {
                return for_tensor(t->name, st.error());
            }
            continue;
        }
        const auto& c = *std::get_if<PreparedComposite>(&item);
        inputs.clear();
        for (size_t k = 0; k < c.members.size(); ++k) {
            inputs.push_back({c.member_names[k], &c.members[k].descriptor, c.members[k].spans});
        }
        if (auto st = writer.add_composite(c.name, c.head, inputs); !st) {
            return for_tensor(c.name, st.error());
        }
    }
    return writer.finish();
}

/// `_hurray.save`: writes the file at `path` atomically; fsync'ed when `durable`;
/// with a descriptor table unless `descriptor_table` is false.
void save(const std::filesystem::path& path, const std::vector<std::string>& names, const py::list& arrays,
          const py::object& kv, const py::object& types, bool durable, bool descriptor_table) {
    const Prepared prepared = prepare(names, arrays, kv, types);
    SaveOptions options;
    options.durability = durable ? Durability::kDurable : Durability::kAtomicOnly;
    options.writer.descriptor_table = descriptor_table;
    std::optional<Status> st;
    {
        const py::gil_scoped_release release;
        auto writer = FileWriter::create_file(path, options.writer, options.durability);
        // On error the writer is destroyed unfinished: its temporary file is
        // removed and `path` keeps its old content.
        st.emplace(writer ? write_prepared(*writer, prepared) : Status(writer.error()));
    }
    if (!*st) {
        raise_error(st->error(), PythonSite::kSave, Site{.label = path.string(), .file = path.string()});
    }
}

/// `_hurray.save_bytes`: the file's bytes, built in memory.
py::bytes save_bytes(const std::vector<std::string>& names, const py::list& arrays, const py::object& kv,
                     const py::object& types) {
    const Prepared prepared = prepare(names, arrays, kv, types);
    MemorySink sink;
    std::optional<Status> st;
    {
        const py::gil_scoped_release release;
        auto writer = FileWriter::create(sink);
        st.emplace(writer ? write_prepared(*writer, prepared) : Status(writer.error()));
    }
    if (!*st) {
        raise_error(st->error(), PythonSite::kSave, "");
    }
    const std::vector<uint8_t>& bytes = sink.bytes();
    // SAFETY: the pointer and length describe the sink's live vector; char may
    // alias any object, and py::bytes copies the bytes.
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// `_hurray.open_bytes`: a file held in memory (a copy of `data`, owned by the
/// file and shared with every array from it).
File open_bytes(const py::buffer& data) {
    const py::buffer_info info = data.request();
    if (info.ndim != 1 || info.itemsize != 1 || info.strides.at(0) != 1) {
        throw py::type_error("open_bytes: expected a contiguous bytes-like object");
    }
    // SAFETY: a contiguous one-dimensional buffer of one-byte items holds
    // `size` readable bytes at `ptr` while `info` (and so the buffer) lives;
    // they are copied before it goes.
    const auto* begin = static_cast<const uint8_t*>(info.ptr);
    auto owned = std::make_shared<const std::vector<uint8_t>>(begin, begin + info.size);
    std::optional<Result<FileReader>> opened;
    {
        const py::gil_scoped_release release;
        opened.emplace(FileReader::open_memory(std::span<const uint8_t>(*owned), owned));
    }
    if (!*opened) {
        raise_error(opened->error(), PythonSite::kOpen, "<bytes>");
    }
    return {std::move(opened->value()), "<bytes>"};
}

}  // namespace

}  // namespace hurray::python

PYBIND11_MODULE(_hurray, m) {
    namespace py = pybind11;
    using hurray::python::File;
    m.doc() = "libhurray's Python extension; use the `hurray` package, not this module";
    m.attr("__version__") = hurray::kVersionString;

    m.def("_set_error_classes", &hurray::python::set_error_classes, py::arg("classes"));
    hurray::python::register_tensor(m);

    py::class_<File>(m, "File", "A lazy handle to an HRRYFILE (hurray.open): names, info and KV without reading data")
        .def_property_readonly("path", &File::path)
        .def_property_readonly("closed", &File::closed)
        .def_property_readonly("mapped", &File::mapped, "Whether the file is memory-mapped")
        .def_property_readonly("writable", &File::writable,
                               "Whether get_tensor returns writable arrays (copy-on-write; writes never reach the file)")
        .def("keys", &File::keys, "Tensor names, in the order they were written")
        .def("info", &File::info, py::arg("name"),
             "A dict: dtype, numpy_dtype, shape, layout, quantization, nbytes, data_offset, buffer_count")
        .def("metadata", &File::metadata, "The KV metadata as a dict")
        .def("get_tensor", &File::get_tensor, py::arg("name"),
             "The tensor as a numpy array, read-only unless opened writable (zero-copy when its data is dense)")
        .def("_get_bits", &File::get_bits, py::arg("name"))
        .def("tensor", &File::tensor, py::arg("name"),
             "The tensor as a hurray.Tensor viewing the file's memory (any layout or element type); a composite "
             "head as a hurray.Composite with its members")
        .def("_member_names", &File::member_names, py::arg("name"))
        .def("to_float32", &File::to_float32, py::arg("name"),
             "Every element as float32 (a new array): dequantized, densified, converted from any element type")
        .def("_data_range", &File::data_range, py::arg("name"))
        .def("close", &File::close)
        .def("__len__", &File::size)
        .def("__contains__", &File::contains)
        .def("__iter__", [](const File& f) { return py::iter(f.keys()); })
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](File& f, const py::args&) { f.close(); })
        .def("__repr__", [](const File& f) {
            return "<hurray.File " + f.path() + (f.closed() ? " (closed)>" : ">");
        });

    m.def("open", &File::open, py::arg("path"), py::arg("writable") = false, py::arg("spec_only") = false,
          "Opens and validates an HRRYFILE; writable=True maps it copy-on-write (writable arrays, file untouched); "
          "spec_only=True refuses libhurray's own private schemes (GGML blocks) as another implementation does");
    m.def("open_url", &File::open_url, py::arg("url"), py::arg("headers") = std::vector<std::string>{},
          py::arg("timeout") = 0.0, py::arg("spec_only") = false, py::arg("aws") = py::none(),
          py::arg("endpoint") = std::string(), py::arg("writable") = false,
          "Opens an HRRYFILE over HTTP(S) or s3:// with range requests (libhurray's HttpRangeSource)");
    m.def("open_bytes", &hurray::python::open_bytes, py::arg("data"), "Validates an HRRYFILE held in memory (copied)");
    m.def("save_bytes", &hurray::python::save_bytes, py::arg("names"), py::arg("arrays"), py::arg("kv") = py::none(),
          py::arg("types") = py::none(),
          "The bytes of an HRRYFILE holding the arrays and KV metadata");
    m.def("save", &hurray::python::save, py::arg("path"), py::arg("names"), py::arg("arrays"),
          py::arg("kv") = py::none(), py::arg("types") = py::none(), py::arg("durable") = true,
          py::arg("descriptor_table") = true,
          "Writes arrays and KV metadata as an HRRYFILE, atomically (fsync of the file and its directory when "
          "durable; a descriptor table unless descriptor_table=False)");
    hurray::python::register_stream(m);
    hurray::python::register_composite(m);
    hurray::python::register_convert(m);
    m.def("_set_composite_factory", &hurray::python::set_composite_factory, py::arg("factory"));
}
