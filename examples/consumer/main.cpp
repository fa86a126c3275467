// Smallest possible libhurray consumer: prints the library version.
#include <hurray/core/version.hpp>

#include <cstdio>

int main() {
    std::printf("libhurray %s (%d.%d.%d)\n", hurray::kVersionString, hurray::kVersionMajor,
                hurray::kVersionMinor, hurray::kVersionPatch);
    return 0;
}
