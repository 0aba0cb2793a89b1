# Turns SAGEATTN_ARCHS ("sm_90;sm_120a", commas accepted too) into explicit -gencode flags.
# CMake's CUDA_ARCHITECTURES is not used: it cannot express the arch-specific "a" targets the
# way nvcc needs them (arch=compute_120a,code=sm_120a), and we want exactly one SASS per arch.

# The archs, the oldest nvcc that builds the kernels for each, what the library embeds and
# which kernel families each gets come from archs/archs.def, the table the CLI and
# sageattn-selftest compile in. Its SA_ARCH rows are read here with a regex; a row it cannot
# read stops the configure, so CMake never sees a table other than the C code's
# (kernels/tests/arch-table-check.sh compares the two).
set(SAGEATTN_ARCH_TABLE "${CMAKE_CURRENT_LIST_DIR}/../archs/archs.def")
if(NOT CMAKE_SCRIPT_MODE_FILE)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${SAGEATTN_ARCH_TABLE}")
endif()
file(STRINGS "${SAGEATTN_ARCH_TABLE}" _sageattn_arch_rows REGEX "^SA_ARCH\\(")
# name, major, minor, variant, nvcc_since, nvcc_dropped, kernels_nvcc, kernels_why, families,
# code, in_all: the columns this file needs come first in each row.
set(_sageattn_arch_row_regex
    "^SA_ARCH\\(\"(sm_[0-9]+[af]?)\", [0-9]+, [0-9]+, (0|'[af]'), \"[0-9.]+\", \"[0-9.]*\", \"([0-9.]*)\", \"[^\"]*\", ([A-Z_| 0]+), (SA_CODE_SASS|SA_CODE_PTX|0), ([01]), ")
set(SAGEATTN_KNOWN_ARCHS "")
foreach(_row IN LISTS _sageattn_arch_rows)
    if(NOT _row MATCHES "${_sageattn_arch_row_regex}")
        message(FATAL_ERROR "${SAGEATTN_ARCH_TABLE}: cannot read the row '${_row}'")
    endif()
    set(_name "${CMAKE_MATCH_1}")
    set(_kernels_nvcc "${CMAKE_MATCH_3}")
    set(_families "${CMAKE_MATCH_4}")
    set(_code "${CMAKE_MATCH_5}")
    if(_families STREQUAL "0")
        continue() # an arch nvcc knows but the kernels are not built for
    endif()
    if(_kernels_nvcc STREQUAL "" OR _code STREQUAL "0")
        message(FATAL_ERROR "${SAGEATTN_ARCH_TABLE}: ${_name} has kernel families but no "
            "kernels_nvcc or code")
    endif()
    list(APPEND SAGEATTN_KNOWN_ARCHS "${_name}")
    set(_sageattn_min_nvcc_${_name} "${_kernels_nvcc}")
    set(_sageattn_code_${_name} "${_code}")
    set(_sageattn_families_${_name} "")
    if(_families MATCHES "SA_FAMILY_MMA")
        list(APPEND _sageattn_families_${_name} mma)
    endif()
    if(_families MATCHES "SA_FAMILY_WGMMA")
        list(APPEND _sageattn_families_${_name} wgmma)
    endif()
endforeach()
if(SAGEATTN_KNOWN_ARCHS STREQUAL "")
    message(FATAL_ERROR "${SAGEATTN_ARCH_TABLE} holds no arch the kernels are built for")
endif()

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
            string(REPLACE ";" " " known "${SAGEATTN_KNOWN_ARCHS}")
            message(FATAL_ERROR
                "SAGEATTN_ARCHS: '${arch}' is not supported; use any of ${known}")
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

# sageattn_archs_with_family(<out-list-var> <archs-list> <family>): the archs of the list that
# the table builds <family> (mma, wgmma) for.
function(sageattn_archs_with_family out_var archs family)
    set(result "")
    foreach(arch IN LISTS archs)
        if(family IN_LIST _sageattn_families_${arch})
            list(APPEND result "${arch}")
        endif()
    endforeach()
    set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

# sageattn_gencode_flags(<out-var> <archs-list> [PTX <compute-arch>]): one -gencode per arch,
# code=sm_X for a SASS row of the table and code=compute_X for a PTX one, plus an embedded PTX
# for <compute-arch> if given.
function(sageattn_gencode_flags out_var archs)
    cmake_parse_arguments(ARG "" "PTX" "" ${ARGN})
    set(flags "")
    foreach(arch IN LISTS archs)
        string(REPLACE "sm_" "" num "${arch}")
        if(_sageattn_code_${arch} STREQUAL "SA_CODE_PTX")
            list(APPEND flags "-gencode=arch=compute_${num},code=compute_${num}")
        else()
            list(APPEND flags "-gencode=arch=compute_${num},code=sm_${num}")
        endif()
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
