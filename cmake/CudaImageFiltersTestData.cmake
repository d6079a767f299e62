# Real images from ITK's examples (Debian package insighttoolkit5-examples),
# copied into the build tree so that a packed build also runs its tests on a
# GPU machine that does not have the package.
set(CudaImageFilters_EXAMPLES_DATA "/usr/share/doc/insighttoolkit5-examples/examples/Data"
  CACHE PATH "Folder of ITK's example images (Debian package insighttoolkit5-examples)")
set(CudaImageFilters_TEST_DATA "${CMAKE_BINARY_DIR}/Data")
foreach(image BrainProtonDensitySlice.png KmeansTest_T1UCharRaw.nii.gz
    BrainProtonDensitySliceBorder20.png BrainProtonDensitySliceShifted13x17y.png
    BrainProtonDensitySliceRotated10.png BrainProtonDensitySliceR10X13Y17.png
    BrainProtonDensitySliceR10X13Y17S12.png BrainT1SliceBorder20.png
    BrainProtonDensitySliceBSplined10.png
    RatLungSlice1.mha RatLungSlice1.raw RatLungSlice2.mha RatLungSlice2.raw)
  if(NOT EXISTS "${CudaImageFilters_EXAMPLES_DATA}/${image}")
    message(FATAL_ERROR "Test image ${CudaImageFilters_EXAMPLES_DATA}/${image} is missing: "
      "install Debian's insighttoolkit5-examples or set CudaImageFilters_EXAMPLES_DATA")
  endif()
  file(COPY "${CudaImageFilters_EXAMPLES_DATA}/${image}" DESTINATION "${CudaImageFilters_TEST_DATA}")
endforeach()
