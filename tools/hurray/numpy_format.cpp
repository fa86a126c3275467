// NumPy-like array printing (see numpy_format.hpp for the rules followed).
#include "hurray/numpy_format.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "hurray/core/element_convert.hpp"

namespace hurray::cli {
namespace {

constexpr uint64_t kMaxShown = 10'000'000;

// A float as shortest decimal digits: value = 0.d1 d2 ... dn  x 10^point (digits without
// leading zeros, `point` = position of the decimal point), or non-finite text.
struct Digits {
    bool negative = false;
    std::string digits;  // "" for zero
    int point = 0;
};

// Shortest round-trip scientific text of `v` as an element of `bits` bits.
std::string shortest_scientific(double v, int bits, uint16_t half_bits) {
    char buf[64];
    if (bits == 32) {
        auto r = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), std::chars_format::scientific);
        return {buf, r.ptr};
    }
    if (bits == 16) {
        // The fewest digits whose value rounds back to the same half (on the magnitude).
        const auto mag = static_cast<uint16_t>(half_bits & 0x7FFFU);
        const double x = std::fabs(v);
        if (mag == 0) {
            return v < 0 || std::signbit(v) ? "-0e+00" : "0e+00";
        }
        const double below = (x - static_cast<double>(float16_to_float(static_cast<uint16_t>(mag - 1)))) / 2;
        const double above = (static_cast<double>(float16_to_float(static_cast<uint16_t>(mag + 1))) - x) / 2;
        const bool even = (mag & 1U) == 0;
        for (int p = 0; p < 17; ++p) {
            std::snprintf(buf, sizeof buf, "%.*e", p, x);
            const double y = std::strtod(buf, nullptr);
            const bool ok = (y >= x && (y - x < above || (y - x == above && even))) ||
                            (y < x && (x - y < below || (x - y == below && even)));
            if (ok) {
                std::string out = std::signbit(v) ? "-" : "";
                out.append(buf);
                return out;
            }
        }
    }
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    return {buf, r.ptr};
}

Digits to_digits(std::string_view sci) {
    Digits d;
    size_t i = 0;
    if (i < sci.size() && sci[i] == '-') {
        d.negative = true;
        ++i;
    }
    const size_t e = sci.find('e');
    std::string mant;
    for (size_t k = i; k < e; ++k) {
        if (sci[k] != '.') {
            mant += sci[k];
        }
    }
    int exp = 0;
    std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
    while (!mant.empty() && mant.back() == '0') {
        mant.pop_back();
    }
    if (mant.empty()) {
        d.point = 0;
        return d;
    }
    d.digits = mant;
    d.point = exp + 1;
    return d;
}

// Positional text split in integer part (with sign) and fraction digits, at most
// `precision` of them, trailing zeros dropped.
std::pair<std::string, std::string> positional(double v, const Digits& d, int precision) {
    std::string ip;
    std::string fp;
    const int frac_digits = static_cast<int>(d.digits.size()) - d.point;
    if (frac_digits > precision) {
        char buf[512];
        std::snprintf(buf, sizeof buf, "%.*f", precision, v);
        std::string s = buf;
        const size_t dot = s.find('.');
        ip = s.substr(0, dot);
        fp = s.substr(dot + 1);
        while (!fp.empty() && fp.back() == '0') {
            fp.pop_back();
        }
        if (ip == "-0" && !std::signbit(v)) {
            ip = "0";
        }
        return {ip, fp};
    }
    if (d.point <= 0) {
        fp = std::string(static_cast<size_t>(-d.point), '0') + d.digits;
    } else if (static_cast<size_t>(d.point) >= d.digits.size()) {
        ip = d.digits + std::string(static_cast<size_t>(d.point) - d.digits.size(), '0');
    } else {
        ip = d.digits.substr(0, static_cast<size_t>(d.point));
        fp = d.digits.substr(static_cast<size_t>(d.point));
    }
    std::string sign = d.negative ? "-" : "";
    sign.append(ip.empty() ? std::string("0") : ip);
    return {sign, fp};
}

// Scientific parts: integer digit (with sign), fraction digits, exponent value.
struct Sci {
    std::string ip;
    std::string fp;
    int exp = 0;
};

Sci scientific(double v, const Digits& d, int precision) {
    Sci s;
    if (d.digits.empty()) {
        s.ip = d.negative ? "-0" : "0";
        return s;
    }
    if (static_cast<int>(d.digits.size()) - 1 > precision) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*e", precision, v);
        Digits r = to_digits(buf);
        s.ip = std::string(r.negative ? "-" : "") + r.digits.substr(0, 1);
        s.fp = r.digits.substr(1);
        s.exp = r.point - 1;
        return s;
    }
    s.ip = std::string(d.negative ? "-" : "") + d.digits.substr(0, 1);
    s.fp = d.digits.substr(1);
    s.exp = d.point - 1;
    return s;
}

std::string pad_left(const std::string& s, size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// NumPy's FloatingFormat (floatmode 'maxprec', sign '-'), fitted to the shown values.
class FloatFormat {
public:
    FloatFormat(const std::vector<Scalar>& values, const std::vector<uint16_t>& half_bits, int bits, int precision)
        : bits_(bits), precision_(precision) {
        double max_abs = 0;
        double min_abs = 0;
        bool any_nonzero = false;
        std::vector<size_t> finite;
        for (size_t k = 0; k < values.size(); ++k) {
            const double v = values[k].f;
            if (!std::isfinite(v)) {
                has_nonfinite_ = true;
                neg_inf_ = neg_inf_ || (std::isinf(v) && v < 0);
                continue;
            }
            finite.push_back(k);
            if (v != 0) {
                const double a = std::fabs(v);
                max_abs = any_nonzero ? std::max(max_abs, a) : a;
                min_abs = any_nonzero ? std::min(min_abs, a) : a;
                any_nonzero = true;
            }
        }
        if (any_nonzero && (max_abs >= 1e8 || min_abs < 0.0001 || max_abs / min_abs > 1000.0)) {
            exp_ = true;
        }
        digits_.resize(values.size());
        for (size_t k : finite) {
            digits_[k] = to_digits(shortest_scientific(values[k].f, bits_, half_bits.empty() ? 0 : half_bits[k]));
        }
        if (finite.empty()) {
            pad_left_ = 0;
            pad_right_ = 0;
        } else if (exp_) {
            size_t frac = 0;
            int exp_digits = 2;
            for (size_t k : finite) {
                Sci s = scientific(values[k].f, digits_[k], precision_);
                frac = std::max(frac, s.fp.size());
                pad_left_ = std::max(pad_left_, s.ip.size());
                exp_digits = std::max(exp_digits, static_cast<int>(std::to_string(std::abs(s.exp)).size()));
            }
            sci_precision_ = static_cast<int>(frac);
            exp_size_ = exp_digits;
            pad_right_ = static_cast<size_t>(exp_size_ + 2 + sci_precision_);
        } else {
            for (size_t k : finite) {
                auto [ip, fp] = positional(values[k].f, digits_[k], precision_);
                pad_left_ = std::max(pad_left_, ip.size());
                pad_right_ = std::max(pad_right_, fp.size());
            }
        }
        if (has_nonfinite_) {
            const size_t offset = pad_right_ + 1;
            const size_t nan_len = 3;
            const size_t inf_len = 3 + (neg_inf_ ? 1 : 0);
            pad_left_ = std::max({pad_left_, nan_len > offset ? nan_len - offset : 0,
                                  inf_len > offset ? inf_len - offset : 0});
        }
    }

    [[nodiscard]] std::string operator()(size_t k, double v) const {
        if (!std::isfinite(v)) {
            const std::string s = std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
            return pad_left(s, pad_left_ + pad_right_ + 1);
        }
        if (exp_) {
            Sci s = scientific(v, digits_[k], precision_);
            std::string fp = s.fp;
            fp.resize(static_cast<size_t>(sci_precision_), '0');
            std::string e = std::to_string(std::abs(s.exp));
            if (e.size() < static_cast<size_t>(exp_size_)) {
                e = std::string(static_cast<size_t>(exp_size_) - e.size(), '0') + e;
            }
            std::string out = pad_left(s.ip, pad_left_);
            out += '.';
            out += fp;
            out += s.exp < 0 ? "e-" : "e+";
            out += e;
            return out;
        }
        auto [ip, fp] = positional(v, digits_[k], precision_);
        fp.resize(pad_right_, ' ');
        std::string out = pad_left(ip, pad_left_);
        out += '.';
        out += fp;
        return out;
    }

private:
    int bits_;
    int precision_;
    bool exp_ = false;
    bool has_nonfinite_ = false;
    bool neg_inf_ = false;
    size_t pad_left_ = 0;
    size_t pad_right_ = 0;
    int sci_precision_ = 0;
    int exp_size_ = 2;
    std::vector<Digits> digits_;
};

// The shown positions of one axis.
struct Axis {
    uint64_t size = 0;               // full length
    std::vector<uint64_t> shown;     // indices shown, in order
    bool summary = false;            // "..." between the leading and trailing edge items
    uint64_t edge = 0;
};

class Printer {
public:
    Printer(const std::vector<Axis>& axes, const std::vector<std::string>& words, size_t line_width)
        : axes_(axes), words_(words), line_width_(line_width) {
        strides_.assign(axes.size(), 1);
        for (size_t a = axes.size(); a-- > 1;) {
            strides_[a - 1] = strides_[a] * axes[a].shown.size();
        }
    }

    std::string print() { return recurse(0, 0, " ", line_width_); }

private:
    static void extend(std::string& s, std::string& line, const std::string& word, size_t width,
                       const std::string& indent) {
        bool wrap = line.size() + word.size() > width;
        if (line.size() <= indent.size()) {
            wrap = false;
        }
        if (wrap) {
            size_t end = line.find_last_not_of(' ');
            s += line.substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
            line = indent;
        }
        line += word;
    }

    // NOLINTNEXTLINE(misc-no-recursion): depth is the rank (at most 64).
    std::string recurse(size_t axis, size_t base, const std::string& indent, size_t width) {
        const Axis& ax = axes_[axis];
        const size_t left = axes_.size() - axis;
        const std::string next_indent = indent + " ";
        const size_t next_width = width - 1;
        const size_t n = ax.shown.size();
        const size_t leading = ax.summary ? static_cast<size_t>(ax.edge) : 0;
        std::string s;
        auto item = [&](size_t pos) {
            return left == 1 ? words_[base + pos] : recurse(axis + 1, base + pos * strides_[axis], next_indent, next_width);
        };
        if (left == 1) {
            const size_t elem_width = width - 1;
            std::string line = indent;
            for (size_t p = 0; p < n; ++p) {
                if (ax.summary && p == leading) {
                    extend(s, line, "...", elem_width, indent);
                    line += " ";
                }
                extend(s, line, item(p), elem_width, indent);
                if (p + 1 < n) {
                    line += " ";
                }
            }
            s += line;
        } else {
            const std::string sep(left - 1, '\n');
            for (size_t p = 0; p < n; ++p) {
                if (ax.summary && p == leading) {
                    s += indent;
                    s += "...";
                    s += sep;
                }
                s += indent + item(p);
                if (p + 1 < n) {
                    s += sep;
                }
            }
        }
        std::string out(1, '[');
        out.append(s, indent.size());
        out += ']';
        return out;
    }

    const std::vector<Axis>& axes_;
    const std::vector<std::string>& words_;
    size_t line_width_;
    std::vector<size_t> strides_;
};

}  // namespace

Result<std::string> format_numpy(std::span<const uint64_t> shape, ValueKind kind, int float_bits,
                                 const FetchElement& fetch, const NumpyOptions& options) {
    uint64_t total = 1;
    for (uint64_t d : shape) {
        if (d == 0) {
            return std::string("[]");
        }
        total = (total > UINT64_MAX / d) ? UINT64_MAX : total * d;
    }
    const bool summarize = total > options.threshold;
    std::vector<Axis> axes(shape.size());
    uint64_t shown = 1;
    for (size_t a = 0; a < shape.size(); ++a) {
        Axis& ax = axes[a];
        ax.size = shape[a];
        ax.edge = options.edge_items;
        ax.summary = summarize && 2 * options.edge_items < shape[a];
        if (ax.summary) {
            for (uint64_t i = 0; i < ax.edge; ++i) {
                ax.shown.push_back(i);
            }
            for (uint64_t i = shape[a] - ax.edge; i < shape[a]; ++i) {
                ax.shown.push_back(i);
            }
        } else {
            if (shape[a] > kMaxShown) {
                return Error(ErrorCode::kInvalidArgument, "too many elements to print");
            }
            for (uint64_t i = 0; i < shape[a]; ++i) {
                ax.shown.push_back(i);
            }
        }
        shown *= ax.shown.size();
        if (shown > kMaxShown) {
            return Error(ErrorCode::kInvalidArgument,
                         "more than " + std::to_string(kMaxShown) + " elements to print; use --index or --limit");
        }
    }
    // Read the shown elements, row-major over the shown positions.
    std::vector<Scalar> values;
    values.reserve(static_cast<size_t>(shown));
    std::vector<uint64_t> index(shape.size(), 0);
    std::vector<size_t> pos(shape.size(), 0);
    for (uint64_t k = 0; k < shown; ++k) {
        for (size_t a = 0; a < shape.size(); ++a) {
            index[a] = axes[a].shown[pos[a]];
        }
        HURRAY_ASSIGN_OR_RETURN(Scalar v, fetch(index));
        values.push_back(v);
        for (size_t a = shape.size(); a-- > 0;) {
            if (++pos[a] < axes[a].shown.size()) {
                break;
            }
            pos[a] = 0;
        }
    }
    std::vector<std::string> words;
    words.reserve(values.size());
    switch (kind) {
        case ValueKind::kFloat: {
            std::vector<uint16_t> half_bits;
            if (float_bits == 16) {
                for (const Scalar& s : values) {
                    half_bits.push_back(static_cast<uint16_t>(s.u));
                }
            }
            FloatFormat f(values, half_bits, float_bits, options.precision);
            for (size_t k = 0; k < values.size(); ++k) {
                words.push_back(f(k, values[k].f));
            }
            break;
        }
        case ValueKind::kSigned:
        case ValueKind::kUnsigned: {
            size_t width = 0;
            for (const Scalar& s : values) {
                width = std::max(width, (kind == ValueKind::kSigned ? std::to_string(s.i) : std::to_string(s.u)).size());
            }
            for (const Scalar& s : values) {
                words.push_back(pad_left(kind == ValueKind::kSigned ? std::to_string(s.i) : std::to_string(s.u), width));
            }
            break;
        }
        case ValueKind::kBool:
            for (const Scalar& s : values) {
                words.emplace_back(s.u != 0 ? (shape.empty() ? "True" : " True") : "False");
            }
            break;
    }
    if (shape.empty() && kind == ValueKind::kFloat) {
        // A scalar prints like Python's repr of a NumPy float: shortest text, `.0` kept.
        const double v = values.front().f;
        if (!std::isfinite(v)) {
            return std::string(std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf"));
        }
        char buf[64];
        auto r = float_bits == 64 ? std::to_chars(buf, buf + sizeof buf, v)
                                  : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
        std::string w(buf, r.ptr);
        if (w.find_first_of(".e") == std::string::npos) {
            w += ".0";
        }
        return w;
    }
    if (shape.empty()) {
        std::string w = words.front();
        w.erase(0, w.find_first_not_of(' '));
        return w;
    }
    Printer p(axes, words, options.line_width);
    return p.print();
}

}  // namespace hurray::cli
