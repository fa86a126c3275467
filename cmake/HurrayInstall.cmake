# Install rules: libraries, public headers, CMake package (hurray::core,
# hurray::io and, when built, hurray::json, hurray::net, hurray::c, hurray::convert and
# hurray::http), hurray.pc, hurray-io.pc, hurray-json.pc, hurray-net.pc, hurray-c.pc and
# hurray-http.pc.
include(CMakePackageConfigHelpers)

set(HURRAY_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/hurray"
    CACHE STRING "Where hurrayConfig.cmake is installed, relative to the prefix")
set(HURRAY_INSTALL_PKGCONFIGDIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig"
    CACHE STRING "Where hurray.pc is installed, relative to the prefix")

set(HURRAY_INSTALLED_TARGETS hurray_core hurray_io)
if(TARGET hurray_json)
    list(APPEND HURRAY_INSTALLED_TARGETS hurray_json)
endif()
if(TARGET hurray_net)
    list(APPEND HURRAY_INSTALLED_TARGETS hurray_net)
endif()
if(TARGET hurray_c)
    list(APPEND HURRAY_INSTALLED_TARGETS hurray_c)
endif()
if(TARGET hurray_convert)
    list(APPEND HURRAY_INSTALLED_TARGETS hurray_convert)
endif()
if(TARGET hurray_http)
    list(APPEND HURRAY_INSTALLED_TARGETS hurray_http)
endif()
install(TARGETS ${HURRAY_INSTALLED_TARGETS}
    EXPORT hurrayTargets
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

# Public headers: everything under include/hurray, plus the generated ones.
# hurray/json/ only when hurray::json is built, hurray/net/ only with hurray::net.
set(_hurray_header_excludes "")
if(NOT TARGET hurray_json)
    list(APPEND _hurray_header_excludes PATTERN "json" EXCLUDE)
endif()
if(NOT TARGET hurray_net)
    list(APPEND _hurray_header_excludes PATTERN "net" EXCLUDE)
endif()
if(NOT TARGET hurray_convert)
    list(APPEND _hurray_header_excludes PATTERN "convert" EXCLUDE)
endif()
if(NOT TARGET hurray_http)
    list(APPEND _hurray_header_excludes PATTERN "http" EXCLUDE)
    set(_hurray_generated_excludes PATTERN "http" EXCLUDE)
else()
    set(_hurray_generated_excludes "")
endif()
install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/hurray"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" ${_hurray_header_excludes})
if(TARGET hurray_c)
    # The C ABI's one header, <hurray.h>, at the top of the include directory.
    install(FILES "${PROJECT_SOURCE_DIR}/include/hurray.h" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
endif()
install(DIRECTORY "${HURRAY_GENERATED_INCLUDE_DIR}/hurray"
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
    FILES_MATCHING PATTERN "*.hpp" ${_hurray_generated_excludes})

install(EXPORT hurrayTargets
    NAMESPACE hurray::
    DESTINATION "${HURRAY_INSTALL_CMAKEDIR}")

# Lets a build tree be used directly with -Dhurray_DIR=<build>.
export(EXPORT hurrayTargets
    NAMESPACE hurray::
    FILE "${PROJECT_BINARY_DIR}/hurrayTargets.cmake")

# hurrayConfig.cmake looks for libcurl only when hurray::http is in the package.
if(TARGET hurray_http)
    set(HURRAY_CONFIG_HAS_HTTP TRUE)
else()
    set(HURRAY_CONFIG_HAS_HTTP FALSE)
endif()
configure_package_config_file(
    "${PROJECT_SOURCE_DIR}/cmake/hurrayConfig.cmake.in"
    "${PROJECT_BINARY_DIR}/hurrayConfig.cmake"
    INSTALL_DESTINATION "${HURRAY_INSTALL_CMAKEDIR}")
# 0.x: a new minor version may break the API.
write_basic_package_version_file(
    "${PROJECT_BINARY_DIR}/hurrayConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}"
    COMPATIBILITY SameMinorVersion)
install(FILES
    "${PROJECT_BINARY_DIR}/hurrayConfig.cmake"
    "${PROJECT_BINARY_DIR}/hurrayConfigVersion.cmake"
    DESTINATION "${HURRAY_INSTALL_CMAKEDIR}")

# pkg-config: paths are relative to the .pc file so the install tree can be moved
# (and so that `cmake --install --prefix DIR` gives a correct file).
cmake_path(SET _hurray_pc_dir NORMALIZE "/${HURRAY_INSTALL_PKGCONFIGDIR}")
cmake_path(RELATIVE_PATH _hurray_pc_dir BASE_DIRECTORY "/" OUTPUT_VARIABLE _hurray_pc_rel)
set(_hurray_up "")
string(REPLACE "/" ";" _hurray_parts "${_hurray_pc_rel}")
foreach(_part IN LISTS _hurray_parts)
    if(_part)
        string(APPEND _hurray_up "/..")
    endif()
endforeach()
set(HURRAY_PC_PREFIX "\${pcfiledir}${_hurray_up}")
foreach(_kind LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${_kind}}")
        set(HURRAY_PC_${_kind} "${CMAKE_INSTALL_${_kind}}")
    else()
        set(HURRAY_PC_${_kind} "\${prefix}/${CMAKE_INSTALL_${_kind}}")
    endif()
endforeach()
configure_file("${PROJECT_SOURCE_DIR}/cmake/hurray.pc.in"
               "${PROJECT_BINARY_DIR}/hurray.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/hurray.pc"
    DESTINATION "${HURRAY_INSTALL_PKGCONFIGDIR}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/hurray-io.pc.in"
               "${PROJECT_BINARY_DIR}/hurray-io.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/hurray-io.pc"
    DESTINATION "${HURRAY_INSTALL_PKGCONFIGDIR}")
if(TARGET hurray_json)
    # Requires hurray; nlohmann/json is not needed by consumers.
    configure_file("${PROJECT_SOURCE_DIR}/cmake/hurray-json.pc.in"
                   "${PROJECT_BINARY_DIR}/hurray-json.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/hurray-json.pc"
        DESTINATION "${HURRAY_INSTALL_PKGCONFIGDIR}")
endif()
if(TARGET hurray_net)
    # Requires hurray-io; Asio is header-only (libasio-dev) and must be on the
    # consumer's include path, as the reader and writer are templates.
    configure_file("${PROJECT_SOURCE_DIR}/cmake/hurray-net.pc.in"
                   "${PROJECT_BINARY_DIR}/hurray-net.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/hurray-net.pc"
        DESTINATION "${HURRAY_INSTALL_PKGCONFIGDIR}")
endif()
if(TARGET hurray_http)
    # Requires hurray-io; libcurl is private (Requires.private: needed to link a static
    # libhurray_http only).
    configure_file("${PROJECT_SOURCE_DIR}/cmake/hurray-http.pc.in"
                   "${PROJECT_BINARY_DIR}/hurray-http.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/hurray-http.pc"
        DESTINATION "${HURRAY_INSTALL_PKGCONFIGDIR}")
endif()
if(TARGET hurray_c)
    # The C ABI: a C program needs only -lhurray_c with a shared library; a static
    # one also needs hurray-io, hurray, ISA-L and the C++ runtime (Libs.private).
    # No Requires on hurray.pc: its Cflags (-std=c++20) would break C compilers.
    # With hurray::convert, a static libhurray_c also needs it and libzip.
    if(TARGET hurray_convert)
        set(HURRAY_C_PC_CONVERT_LIBS "-lhurray_convert -lzip ")
    else()
        set(HURRAY_C_PC_CONVERT_LIBS "")
    endif()
    if(TARGET hurray_http)
        string(APPEND HURRAY_C_PC_CONVERT_LIBS "-lhurray_http -lcurl ")
    endif()
    configure_file("${PROJECT_SOURCE_DIR}/cmake/hurray-c.pc.in"
                   "${PROJECT_BINARY_DIR}/hurray-c.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/hurray-c.pc"
        DESTINATION "${HURRAY_INSTALL_PKGCONFIGDIR}")
endif()
