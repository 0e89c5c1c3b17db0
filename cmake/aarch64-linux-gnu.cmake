# Cross build for aarch64 Linux on an x86_64 host: Debian's aarch64-linux-gnu GCC against an
# arm64 Debian root as sysroot (scripts/arm64-root.sh makes one; scripts/cross-build-aarch64.sh
# passes it as WHEELFARM_ARM64_ROOT). Code generators (protoc, grpc_cpp_plugin) are the
# host's: the root's are aarch64 binaries of the same Debian release.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
if(NOT WHEELFARM_ARM64_ROOT)
  message(FATAL_ERROR "WHEELFARM_ARM64_ROOT is not set. Fix: bash scripts/cross-build-aarch64.sh")
endif()
# try_compile projects read this file again: hand the root on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES WHEELFARM_ARM64_ROOT)
set(CMAKE_SYSROOT ${WHEELFARM_ARM64_ROOT})
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${WHEELFARM_ARM64_ROOT})
set(ENV{PKG_CONFIG_LIBDIR}
    "${WHEELFARM_ARM64_ROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${WHEELFARM_ARM64_ROOT}/usr/share/pkgconfig")
# GCC 12 reports a false -Wrestrict inside <char_traits> when optimizing for aarch64
# (GCC bug 105329); the x86_64 build keeps the warning.
set(CMAKE_CXX_FLAGS_INIT "-Wno-restrict")
