#!/usr/bin/env bash
# call V: the landing commit's own build (box filters: z window in registers, square radii compiled, next plane loaded early): GPU suites, sanitizers, benchmark against main's core library (.old), Nsight Compute on the 16-bit erosion r=1
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/callV.log) 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
cat .device/commit
.device/run true || exit 1
mkdir -p /tmp/oldlib; xz -dc .old/libCudaImageFiltersCore.so.xz > /tmp/oldlib/libCudaImageFiltersCore.so
B=/work/main/build/bin
L=$O/logs; mkdir -p $L
snap() { (cd $O && tar czf logsV.tgz logs); }
gt() { for t in "$@"; do
  CUDAIMAGEFILTERS_REQUIRE_GPU=1 timeout 120 .device/run $B/$t > $L/gtest-$t.log 2>&1; echo "$t exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $L/gtest-$t.log | tr '\n' ' ')"
done; snap; }
gt itkCudaGrayscaleErodeImageFilterTest itkCudaMeanImageFilterTest itkCudaSegmentationPipelineTest
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() { tool=$1; shift; for t in "$@"; do
    extra=; [ $tool = memcheck ] && extra="--leak-check full"
    CUDAIMAGEFILTERS_REQUIRE_GPU=1 timeout 150 .device/run $CS --tool $tool $extra $B/$t --gtest_filter='*Gpu*' > $L/sanitizer-$tool-$t.log 2>&1
    echo "$t $tool exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' $L/sanitizer-$tool-$t.log | tr '\n' ' ')"
done; snap; }
seg() { for r in "$@"; do
  for k in old new; do
    if [ $k = old ]; then e=/tmp/oldlib; else e=; fi
    env ${e:+LD_LIBRARY_PATH=$e} .device/run $B/SegmentationBenchmark --reps 30 --skip-itk --skip-cpu > $L/seg-$k-$r.log 2>&1
    echo "seg $k $r: $(grep -E 'GPU (box mean|erosion \(flat box\)) r=' $L/seg-$k-$r.log | sed -E 's/^(512x512x72 uint16|512\^3 float32) +GPU (box mean|erosion \(flat box\)) (r=[0-9]+) +([0-9.]+).*/\1 \2 \3 \4/' | sed -e 's/512x512x72 uint16/u16/' -e 's/512\^3 float32/f32/' -e 's/erosion (flat box)/erode/' -e 's/box mean/mean/' | tr '\n' ';')"
  done
done; snap; }
echo "== benchmarks from $SECONDS s"
seg 1
san racecheck itkCudaGrayscaleErodeImageFilterTest itkCudaMeanImageFilterTest
seg 2
gt itkCudaSlabsTest itkCudaMemoryReturnTest
san memcheck itkCudaGrayscaleErodeImageFilterTest itkCudaMeanImageFilterTest itkCudaSegmentationPipelineTest
san racecheck itkCudaSegmentationPipelineTest
echo "== ncu from $SECONDS s"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active
for k in new old; do
  if [ $k = old ]; then e=/tmp/oldlib; else e=; fi
  env ${e:+LD_LIBRARY_PATH=$e} timeout 60 .device/run $NCU --kernel-name-base demangled --metrics $M -k 'regex:FusedBoxKernel<.*MinOp<unsigned short' -c 1 --csv $B/SegmentationBenchmark --reps 1 --skip-itk --skip-cpu --only-ct > $L/ncu-erode-u16-r1-$k.csv 2>&1; echo "ncu erode $k exit $?: $(grep -c gpu__time $L/ncu-erode-u16-r1-$k.csv) rows"
done
echo "== done $SECONDS s"
(cd $O && tar czf logsV.tgz logs && rm -rf logs)
