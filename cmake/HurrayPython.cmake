# Looks for Python 3 (interpreter, extension headers, NumPy) and pybind11, and
# declares HURRAY_BUILD_PYTHON accordingly. Included by the top-level CMakeLists.

set(_hurray_python_default OFF)
set(_hurray_python_why "")
if(HURRAY_SANITIZE OR HURRAY_SANITIZE_THREAD OR HURRAY_COVERAGE)
    set(_hurray_python_why "HURRAY_SANITIZE/HURRAY_SANITIZE_THREAD/HURRAY_COVERAGE is on (an instrumented extension cannot be loaded into the uninstrumented interpreter)")
else()
    if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
        set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python 3 interpreter the module is built for")
    endif()
    find_package(Python3 3.8 QUIET COMPONENTS Interpreter Development.Module NumPy)
    if(NOT Python3_FOUND)
        set(_hurray_python_why "Python 3 with its headers and NumPy was not found (Debian: python3-dev python3-numpy)")
    else()
        find_package(pybind11 2.6 CONFIG QUIET)
        if(NOT pybind11_FOUND)
            set(_hurray_python_why "pybind11 was not found (Debian: pybind11-dev)")
        else()
            set(_hurray_python_default ON)
        endif()
    endif()
endif()

option(HURRAY_BUILD_PYTHON "Build the hurray Python module (python/; needs pybind11, Python 3 headers, NumPy)"
       ${_hurray_python_default})

if(HURRAY_BUILD_PYTHON AND NOT _hurray_python_default)
    message(FATAL_ERROR "HURRAY_BUILD_PYTHON is ON but ${_hurray_python_why}; "
                        "install them or configure with -DHURRAY_BUILD_PYTHON=OFF")
elseif(HURRAY_BUILD_PYTHON)
    message(STATUS "HURRAY_BUILD_PYTHON: building the hurray module for ${Python3_EXECUTABLE} "
                   "(Python ${Python3_VERSION}, NumPy ${Python3_NumPy_VERSION}, pybind11 ${pybind11_VERSION})")
    add_subdirectory(python)
else()
    if(_hurray_python_why STREQUAL "")
        set(_hurray_python_why "it was turned off")
    endif()
    message(STATUS "HURRAY_BUILD_PYTHON is OFF: the hurray Python module is not built: ${_hurray_python_why}")
endif()
