// SPDX-License-Identifier: Apache-2.0
// docs/guide.md's remote-file snippet (hurray::http), built and run by ctest
// through examples/readme_remote.sh, which serves the conformance file
// basic.hrry with nginx on 127.0.0.1 and passes its URL.
#include <hurray/http/load_url.hpp>

#include <cstdio>
#include <string>

namespace {

hurray::Status run(const std::string& url) {
    // readme:begin remote
    hurray::http::HttpOptions http;                              // timeouts, retries, extra headers
    auto file = hurray::http::load_url(url, http);               // 2-3 requests: tail, header + index + KV, descriptors
    if (!file) return file.error();                        // names the URL (no credentials) and the range
    const hurray::FileReader& r = file->reader();
    for (size_t i = 0; i < r.tensor_count(); ++i) {        // names, types, shapes: fetched at open
        auto d = r.descriptor(i);
        if (!d) return d.error();
        std::printf("%s %s rank %u\n", std::string(r.entry(i).name).c_str(),
                    std::string(hurray::type_name((*d)->element_type)).c_str(), (*d)->rank());
    }
    auto w = file->tensor("weights").as<float>();          // its data: one request, then kept
    if (!w) return w.error();
    std::printf("weights[3] = %g\n", (*w)[3]);
    // readme:end remote
    return hurray::Status::success();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: hurray_readme_remote URL\n");
        return 2;
    }
    const hurray::Status st = run(argv[1]);
    if (!st) {
        std::fprintf(stderr, "readme_remote: %s\n", st.error().to_string().c_str());
        return 1;
    }
    return 0;
}
