# Sourced by the H200 run scripts (bench/run_h200_issue12*.sh) with B (the packed build) and O
# (the output folder) set: the machine's record (O/gpu.txt: name, driver, clocks, P-state;
# O/devices.txt: `nbx devices -v`, which shows cuBLASLt's and cuDNN's status), the library
# path (the packed build, then PyTorch's NVIDIA wheels), and `step NAME SECONDS COMMAND…`, which runs one
# step under its own time limit (skipped unless named in $ONLY, when that is set, or when it
# could end past $DEADLINE seconds), logs it to
# O/NAME.log and appends "NAME rc=… Ns" to O/steps.log.
export LD_LIBRARY_PATH=$PWD/$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# cuDNN (and the NVRTC its runtime-compiled engines load) come with PyTorch's wheels there:
# their lib folders go on the path so the CUDA module's dlopen finds libcudnn.so.9.
NV=$(python3 -c "import nvidia, os; print(os.path.dirname(nvidia.__file__))" 2>/dev/null)
for lib in "$NV"/*/lib; do
  [ -d "$lib" ] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$lib
done
export LD_LIBRARY_PATH
export PYTHONFAULTHANDLER=1
# vulkan:0 on NVIDIA's driver needs the Vulkan loader and the glvnd libraries, which the image
# lacks (../shared/docs/h200.md): the seven Debian packages carried in .gl/ (`apt-get
# download` here), unpacked over / once, and the driver's ICD and EGL vendor files named.
if [ -d .gl ] && ! ldconfig -p | grep -q libvulkan.so.1; then
  for p in .gl/*.deb; do dpkg -x "$p" /; done
  ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd
[ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm,clocks.mem,pstate \
  --format=csv >"$O/gpu.txt" 2>&1
"$B/nbx" devices -v >"$O/devices.txt" 2>&1
step() {
  local name=$1 limit=$2 t0=$SECONDS
  shift 2
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return 0; fi
  # DEADLINE (seconds since the script began): later steps are skipped, and said so.
  if [ -n "${DEADLINE:-}" ] && [ $((SECONDS + limit)) -gt "$DEADLINE" ]; then
    echo "$name skipped (DEADLINE $DEADLINE s)" >>"$O/steps.log"
    return 0
  fi
  timeout "$limit" "$@" >"$O/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - t0))s" >>"$O/steps.log"
}
# san TOOL NAME COMMAND…: the command under compute-sanitizer's TOOL as step NAME, in the
# background, limited to $S seconds; NVTX on, so the marks of what cuBLASLt and cuDNN write
# (backends/cuda/cuda_sanitizer_marks.cpp) reach initcheck.
san() {
  local tool=$1 name=$2
  shift 2
  step "$name" "${S:-240}" compute-sanitizer --tool "$tool" --nvtx yes --error-exitcode 1 "$@" &
}
