# Helper functions shared by the top-level build and the fuzz build.

# Applies what every build of the core sources needs: C++20, the public include
# directories (source tree, generated headers, install tree), the private src/ include
# directory for internal headers, and -fno-exceptions -fno-rtti. The last two are
# PRIVATE, so consumers keep their own exception/RTTI settings.
function(hurray_configure_core_target target)
    target_compile_features(${target} PUBLIC cxx_std_20)
    target_include_directories(${target}
        PUBLIC
            "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>"
            "$<BUILD_INTERFACE:${HURRAY_GENERATED_INCLUDE_DIR}>"
            "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>"
        PRIVATE
            "${PROJECT_SOURCE_DIR}/src")
    target_compile_options(${target} PRIVATE -fno-exceptions -fno-rtti)
endfunction()

# gcov instrumentation (compile and link) for one target.
function(hurray_enable_coverage target)
    # Atomic counter updates: the tests run threads (stream transports, a 4-thread
    # io_context) and plain increments race, leaving negative branch counts that gcov
    # prints and gcovr refuses to parse.
    target_compile_options(${target} PRIVATE --coverage -fprofile-update=atomic)
    # PUBLIC so that executables linking a static hurray_core also pull in libgcov;
    # BUILD_INTERFACE keeps it out of the installed package.
    target_link_options(${target} PUBLIC "$<BUILD_INTERFACE:--coverage>")
endfunction()

# Symbol visibility of one library: hidden by default (-fvisibility=hidden
# -fvisibility-inlines-hidden), exported only where its headers say so with the macros
# of a generated hurray/<lib>/export.hpp (HURRAY_<LIB>_EXPORT, GenerateExportHeader).
function(hurray_export_symbols target lib)
    include(GenerateExportHeader)
    string(TOUPPER "${lib}" _upper)
    generate_export_header(${target}
        BASE_NAME "HURRAY_${_upper}"
        EXPORT_FILE_NAME "${HURRAY_GENERATED_INCLUDE_DIR}/hurray/${lib}/export.hpp")
    set_target_properties(${target} PROPERTIES
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN ON)
    # GCC assumes that an exported function may be interposed (replaced at load time by
    # another library's), so it neither inlines one nor calls it directly from inside
    # its own library: every call goes through the PLT. Nothing interposes ours (Clang
    # assumes the same by default).
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-semantic-interposition>)
endfunction()
