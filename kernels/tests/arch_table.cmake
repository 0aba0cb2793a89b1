# What cmake/SageattnArchs.cmake makes of archs/archs.def, for arch-table-check.sh:
#   cmake -DMODE=dump -DOUT=FILE -P arch_table.cmake
#       one line per arch: "name min_nvcc families code" (as dump_arch_table prints the C side)
#   cmake -DMODE=normalize -DARCHS="sm_90;sm_90a" -DNVCC=12.4 -DOUT=FILE -P arch_table.cmake
#       "archs|gencode flags|wgmma archs" for that nvcc version, or a fatal error
cmake_minimum_required(VERSION 3.25) # as kernels/CMakeLists.txt: the same policies
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/SageattnArchs.cmake")

if(MODE STREQUAL "dump")
    file(WRITE "${OUT}" "")
    foreach(arch IN LISTS SAGEATTN_KNOWN_ARCHS)
        string(REPLACE ";" "," families "${_sageattn_families_${arch}}")
        if(_sageattn_code_${arch} STREQUAL "SA_CODE_PTX")
            set(code ptx)
        else()
            set(code sass)
        endif()
        file(APPEND "${OUT}" "${arch} ${_sageattn_min_nvcc_${arch}} ${families} ${code}\n")
    endforeach()
elseif(MODE STREQUAL "normalize")
    set(CMAKE_CUDA_COMPILER nvcc)
    set(CMAKE_CUDA_COMPILER_VERSION "${NVCC}")
    sageattn_normalize_archs(archs "${ARCHS}")
    sageattn_gencode_flags(gencode "${archs}")
    sageattn_archs_with_family(wgmma "${archs}" wgmma)
    file(WRITE "${OUT}" "${archs}|${gencode}|${wgmma}\n")
else()
    message(FATAL_ERROR "MODE must be dump or normalize")
endif()
