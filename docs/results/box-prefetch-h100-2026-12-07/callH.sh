#!/usr/bin/env bash
# call H (callG plus CIF_EXP_PREFETCH, the box kernels' next-plane loads into registers): the landing candidate (branch cand) plus the experiment CIF_EXP_BLOCK (the cubic kernel's block shape); call F's checks, then (erosion's z window in registers for rz = 1, box kernels with rx = ry in 1..3 unrolled, cubic weights once) against HEAD's core library (.old)
set -uo pipefail
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/callH.log) 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
.device/run true || exit 1
mkdir -p /tmp/oldlib; xz -dc .old/libCudaImageFiltersCore.so.xz > /tmp/oldlib/libCudaImageFiltersCore.so
B=/work/main/build/bin
L=$O/logs; mkdir -p $L
for t in itkCudaGrayscaleErodeImageFilterTest itkCudaMeanImageFilterTest itkCudaResampleImageFilterTest; do
  CUDAIMAGEFILTERS_REQUIRE_GPU=1 .device/run $B/$t > $L/gtest-$t.log 2>&1; echo "$t exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $L/gtest-$t.log | tr '\n' ' ')"
done
for t in itkCudaGrayscaleErodeImageFilterTest itkCudaMeanImageFilterTest itkCudaSegmentationPipelineTest; do
  CIF_EXP_PREFETCH=1 CUDAIMAGEFILTERS_REQUIRE_GPU=1 .device/run $B/$t > $L/gtest-pre-$t.log 2>&1; echo "prefetch $t exit $?: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $L/gtest-pre-$t.log | tr '\n' ' ')"
done
echo "== benchmarks from $SECONDS s"
for r in 1 2; do
  for k in old new pre; do
    if [ $k = old ]; then e=/tmp/oldlib; else e=; fi
    if [ $k = pre ]; then pf=1; else pf=0; fi
    env ${e:+LD_LIBRARY_PATH=$e} CIF_EXP_PREFETCH=$pf .device/run $B/SegmentationBenchmark --reps 30 --skip-itk --skip-cpu > $L/seg-$k-$r.log 2>&1
    echo "seg $k $r: $(grep -E 'GPU (box mean|erosion \(flat box\)) r=' $L/seg-$k-$r.log | sed -E 's/^(512x512x72 uint16|512\^3 float32) +GPU (box mean|erosion \(flat box\)) (r=[0-9]+) +([0-9.]+).*/\1 \2 \3 \4/' | sed -e 's/512x512x72 uint16/u16/' -e 's/512\^3 float32/f32/' -e 's/erosion (flat box)/erode/' -e 's/box mean/mean/' | tr '\n' ';')"
  done
done
for k in old new; do
  if [ $k = old ]; then e=/tmp/oldlib; else e=; fi
  env ${e:+LD_LIBRARY_PATH=$e} .device/run $B/ResampleBenchmark --reps 10 --skip-itk > $L/resample-$k.log 2>&1
  echo "resample $k: $(grep 'resample only (accurate' $L/resample-$k.log | awk '{print $(NF-2)}') rotation: $(grep 'recursive prefilter + resample' $L/resample-$k.log | head -1 | awk '{print $(NF-2)}')"
done
echo "== block shapes from $SECONDS s"
for shape in ${GSHAPES:-16,16 8,32 4,64 8,16}; do
  CIF_EXP_BLOCK=$shape CUDAIMAGEFILTERS_REQUIRE_GPU=1 .device/run $B/itkCudaResampleImageFilterTest --gtest_filter='ResampleGpu.*' > $L/gtest-resample-$shape.log 2>&1; echo "resample gtest $shape exit $?: $(grep -E '^\[  (PASSED|FAILED) ' $L/gtest-resample-$shape.log | tr '\n' ' ')"
done
for r in 1 2; do
  for shape in ${BSHAPES:-32,8 16,16 8,32 4,64 8,16}; do
    CIF_EXP_BLOCK=$shape .device/run $B/ResampleBenchmark --reps 10 --skip-itk > $L/resample-$shape-$r.log 2>&1
    echo "block $shape run $r: $(grep 'resample only (accurate' $L/resample-$shape-$r.log | awk '{print $(NF-2)}') rotation: $(grep 'recursive prefilter + resample' $L/resample-$shape-$r.log | head -1 | awk '{print $(NF-2)}')"
  done
done
echo "== ncu from $SECONDS s"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
M=gpu__time_duration.sum,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,dram__throughput.avg.pct_of_peak_sustained_elapsed
for k in new pre old; do
  if [ $k = old ]; then e=/tmp/oldlib; else e=; fi
  if [ $k = pre ]; then pf=1; else pf=0; fi
  [ $SECONDS -lt ${NCU_UNTIL:-460} ] || break
  env ${e:+LD_LIBRARY_PATH=$e} CIF_EXP_PREFETCH=$pf timeout 40 .device/run $NCU --metrics $M -k regex:"FusedBoxKernel.*MinOp" -c 1 --csv $B/SegmentationBenchmark --reps 1 --skip-itk --skip-cpu --only-ct > $L/ncu-MinOp-$k.csv 2>&1; echo "ncu MinOp $k exit $?"
done
MR=gpu__time_duration.sum,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,lts__t_sector_hit_rate.pct
for shape in 32,8 8,32 4,64; do
  [ $SECONDS -lt ${NCU_UNTIL:-460} ] || break
  CIF_EXP_BLOCK=$shape timeout 60 .device/run $NCU --metrics $MR -k regex:ResampleKernel -c 1 --csv $B/ResampleBenchmark --reps 1 --skip-itk > $L/ncu-resample-$shape.csv 2>&1; echo "ncu resample $shape exit $?"
done
echo "== done $SECONDS s"
(cd $O && tar czf logsH.tgz logs && rm -rf logs)
