# Turns SAGEATTN_ARCHS ("sm_90;sm_120a", commas accepted too) into explicit -gencode flags.
# CMake's CUDA_ARCHITECTURES is not used: it cannot express the arch-specific "a" targets the
# way nvcc needs them (arch=compute_120a,code=sm_120a), and we want exactly one SASS per arch.

# Oldest nvcc that can emit each arch (release notes of CUDA 11.8, 12.0, 12.8 and 12.9).
set(_sageattn_min_nvcc_sm_80 11.0)
set(_sageattn_min_nvcc_sm_86 11.1)
set(_sageattn_min_nvcc_sm_89 11.8)
set(_sageattn_min_nvcc_sm_90 11.8)
set(_sageattn_min_nvcc_sm_90a 12.0)
set(_sageattn_min_nvcc_sm_100a 12.8)
set(_sageattn_min_nvcc_sm_120a 12.8)
set(_sageattn_min_nvcc_sm_121a 12.9)

# sageattn_normalize_archs(<out-list-var> <in-string>): split on ; , or space, lower-case,
# check each against the supported list and the nvcc version, drop duplicates, keep order.
function(sageattn_normalize_archs out_var in_string)
    string(REPLACE "," ";" archs "${in_string}")
    string(REPLACE " " ";" archs "${archs}")
    string(TOLOWER "${archs}" archs)
    set(result "")
    foreach(arch IN LISTS archs)
        if(arch STREQUAL "")
            continue()
        endif()
        if(NOT DEFINED _sageattn_min_nvcc_${arch})
            message(FATAL_ERROR
                "SAGEATTN_ARCHS: '${arch}' is not supported; use any of "
                "sm_80 sm_86 sm_89 sm_90 sm_90a sm_100a sm_120a sm_121a")
        endif()
        set(need "${_sageattn_min_nvcc_${arch}}")
        if(CMAKE_CUDA_COMPILER_VERSION VERSION_LESS need)
            message(FATAL_ERROR
                "SAGEATTN_ARCHS: ${arch} needs nvcc ${need} or newer; "
                "${CMAKE_CUDA_COMPILER} is ${CMAKE_CUDA_COMPILER_VERSION}")
        endif()
        list(APPEND result "${arch}")
    endforeach()
    list(REMOVE_DUPLICATES result)
    if(result STREQUAL "")
        message(FATAL_ERROR "SAGEATTN_ARCHS is empty")
    endif()
    set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

# sageattn_gencode_flags(<out-var> <archs-list> [PTX <compute-arch>]): one
# -gencode=arch=compute_X,code=sm_X per arch, plus an embedded PTX for <compute-arch> if given.
function(sageattn_gencode_flags out_var archs)
    cmake_parse_arguments(ARG "" "PTX" "" ${ARGN})
    set(flags "")
    foreach(arch IN LISTS archs)
        string(REPLACE "sm_" "" num "${arch}")
        list(APPEND flags "-gencode=arch=compute_${num},code=sm_${num}")
    endforeach()
    if(ARG_PTX)
        list(APPEND flags "-gencode=arch=compute_${ARG_PTX},code=compute_${ARG_PTX}")
    endif()
    set(${out_var} "${flags}" PARENT_SCOPE)
endfunction()

# sageattn_normalize_head_dims(<out-list-var> <in-string>): the native head dims to compile
# (64 and/or 128; other head dims run zero-padded to the next of these).
function(sageattn_normalize_head_dims out_var in_string)
    string(REPLACE "," ";" dims "${in_string}")
    string(REPLACE " " ";" dims "${dims}")
    set(result "")
    foreach(d IN LISTS dims)
        if(d STREQUAL "")
            continue()
        endif()
        if(NOT d MATCHES "^(64|128)$")
            message(FATAL_ERROR
                "SAGEATTN_HEAD_DIMS: '${d}' is not a native head dim; use 64 and/or 128 "
                "(any head_dim up to 128 runs zero-padded to one of them)")
        endif()
        list(APPEND result "${d}")
    endforeach()
    list(REMOVE_DUPLICATES result)
    list(SORT result COMPARE NATURAL)
    if(result STREQUAL "")
        message(FATAL_ERROR "SAGEATTN_HEAD_DIMS is empty")
    endif()
    set(${out_var} "${result}" PARENT_SCOPE)
endfunction()
