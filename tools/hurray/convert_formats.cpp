// SPDX-License-Identifier: Apache-2.0
// `hurray convert` through hurray::convert: any format it reads to any format it writes.
#include "hurray/convert_formats.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include "hurray/progress.hpp"

#ifdef HURRAY_CLI_HAS_CONVERT
#include "hurray/convert/convert.hpp"
#include "hurray/convert/format.hpp"
#include "hurray/convert/tensor_source.hpp"
#endif

namespace hurray::cli {

#ifdef HURRAY_CLI_HAS_CONVERT
namespace {

namespace hc = hurray::formats;

bool foreign(hc::Format f) {
    return f == hc::Format::kSafeTensors || f == hc::Format::kGguf || f == hc::Format::kNpy ||
           f == hc::Format::kNpz;
}

/// The format of the file at `path` from its first bytes (kUnknown when unreadable).
hc::Format detected(const std::string& path) {
    if (path == "-") {
        return hc::Format::kUnknown;
    }
    std::ifstream is(path, std::ios::binary);
    if (!is) {
        return hc::Format::kUnknown;
    }
    std::array<uint8_t, hc::kDetectHeadBytes> head{};
    // SAFETY: char may alias the bytes of the array; at most head.size() are written.
    is.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
    const auto n = static_cast<size_t>(is.gcount());
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    return hc::detect_format(std::span<const uint8_t>(head.data(), n),
                             ec ? std::nullopt : std::optional<uint64_t>(size));
}

/// The output format asked for, nullopt when neither --to nor the extension names one.
std::optional<hc::Format> requested_output(const FormatConvertRequest& r) {
    if (r.to == "file") {
        return hc::Format::kHrryFile;
    }
    if (r.to == "stream") {
        return hc::Format::kStream;
    }
    if (!r.to.empty()) {
        auto f = hc::parse_format_name(r.to);
        return f ? std::optional<hc::Format>(*f) : std::nullopt;
    }
    if (r.out == "-") {
        return std::nullopt;
    }
    return hc::format_from_extension(r.out);
}

int fail(const Console& console, const FormatConvertRequest& r, const std::string& message) {
    console.err << "hurray convert: " << r.in << " -> " << r.out << ": " << message << '\n';
    return kExitInvalid;
}

}  // namespace

bool uses_converter(const FormatConvertRequest& r) {
    if (r.dequantize || !r.dtype.empty() || r.verify) {
        return true;
    }
    const auto out = requested_output(r);
    if (out && foreign(*out)) {
        return true;
    }
    // A foreign input written to standard output stays on the HRRYFILE / stream path, which
    // reports it as not a Hurray file or stream (a stream cannot be written from it).
    return r.out != "-" && foreign(detected(r.in));
}

int run_format_convert(const FormatConvertRequest& r, const Console& console) {
    if (r.in == "-" || r.out == "-") {
        console.err << "hurray convert: standard input and output carry HRRYFILE / stream "
                       "conversions only; "
                       "give file paths for "
                    << (r.dequantize || !r.dtype.empty() || r.verify
                            ? "--dequantize, --dtype and --verify"
                            : "SafeTensors, GGUF and NumPy files")
                    << "\n";
        return kExitUsage;
    }
    hc::ConvertOptions options;
    options.to = requested_output(r).value_or(hc::Format::kHrryFile);
    if (options.to == hc::Format::kStream) {
        console.err
            << "hurray convert: a stream output is written from an HRRYFILE or a stream only\n";
        return kExitUsage;
    }
    options.dequantize = r.dequantize || !r.dtype.empty();
    if (!r.dtype.empty()) {
        options.dequantize_type = r.dtype == "float16"    ? ElementType::kFloat16
                                  : r.dtype == "bfloat16" ? ElementType::kBFloat16
                                                          : ElementType::kFloat32;
    }
    options.verify = r.verify;
    std::optional<Progress> progress;
    options.progress = [&](uint64_t done, uint64_t total) {
        if (!progress) {
            progress.emplace(console, total);
        }
        progress->update(done);
    };
    auto report = hc::convert_file(r.in, r.out, options);
    if (progress) {
        progress->finish();
    }
    if (!report) {
        return fail(console, r, report.error().to_string());
    }
    if (report->verified) {
        console.err << "hurray convert: " << r.out << ": verified " << report->tensors
                    << " tensors (" << report->data_bytes << " bytes of data) against " << r.in
                    << '\n';
    }
    return kExitOk;
}

std::optional<Result<ForeignListing>> list_foreign(const std::string& path) {
    const hc::Format f = detected(path);
    if (!foreign(f)) {
        return std::nullopt;
    }
    auto src = hc::open_source(path);
    if (!src) {
        if (src.error().code() == ErrorCode::kUnsupported &&
            src.error().message().find("reader in this build") != std::string::npos) {
            return std::nullopt;  // no reader for it: reported as not a Hurray file
        }
        return Result<ForeignListing>(src.error());
    }
    ForeignListing listing;
    listing.format = std::string(hc::format_name(f));
    for (size_t i = 0; i < (*src)->tensor_count(); ++i) {
        listing.tensors.emplace_back((*src)->tensor(i).name, (*src)->tensor(i).descriptor);
    }
    listing.kv = (*src)->kv();
    return Result<ForeignListing>(std::move(listing));
}

#else  // built without hurray::convert

std::optional<Result<ForeignListing>> list_foreign(const std::string& /*path*/) {
    return std::nullopt;
}

bool uses_converter(const FormatConvertRequest& r) {
    return r.dequantize || !r.dtype.empty() || r.verify ||
           (!r.to.empty() && r.to != "file" && r.to != "stream" && r.to != "hrryfile");
}

int run_format_convert(const FormatConvertRequest& /*request*/, const Console& console) {
    console.err << "hurray convert: this build has no hurray::convert (SafeTensors, GGUF and NumPy "
                   "conversions, --dequantize, --verify)\n";
    return kExitInvalid;
}

#endif

}  // namespace hurray::cli
