# CMake toolchain file: cross-compile for 64-bit Windows with mingw-w64 from
# Linux (Debian and Ubuntu: apt-get install gcc-mingw-w64-x86-64
# g++-mingw-w64-x86-64; the Rust target: rustup target add x86_64-pc-windows-gnu).
#
#   cmake -S . -B build-windows -DCMAKE_BUILD_TYPE=Release \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64-x86_64.cmake \
#     -DMCP_STDIO_CARGO_TARGET=x86_64-pc-windows-gnu
#   cmake --build build-windows
#   cmake --install build-windows --prefix /path/to/windows-prefix
#
# cargo links the Rust side with x86_64-w64-mingw32-gcc, its default linker
# for that target; this file gives CMake the same compilers.
#
# find_* look for Windows files only under CMAKE_FIND_ROOT_PATH (programs,
# which run on the build machine, only outside it). A project consuming a
# package cross-built and installed in <prefix> names the prefix both ways:
#   -DCMAKE_PREFIX_PATH=<prefix> -DCMAKE_FIND_ROOT_PATH=<prefix>
# (a path already under a root is searched as it is, not re-rooted).

set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)

# The roots: mingw-w64's headers and libraries, and any the user gives
# (-DCMAKE_FIND_ROOT_PATH=...). This file is read again for every
# try_compile: add the root once.
list(FIND CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 _mingw_root_index)
if(_mingw_root_index EQUAL -1)
  list(APPEND CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
endif()
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
