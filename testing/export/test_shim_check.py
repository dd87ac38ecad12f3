"""The missing-shim-function check: a model library's aoti_torch_* imports
against the shim library's exports (from the .so or from name lists)."""

import pytest

from aotrun_export.shim_check import (MissingShimFunctions,
                                      check_shim_coverage, load_shim_exports,
                                      model_imports)

MODEL = r"""
extern int aoti_torch_empty_strided(void);
extern int aoti_torch_cuda_mm_out(void);
extern int aoti_torch_cuda_index_Tensor(void);
extern int aoti_torch_cuda__scaled_dot_product_flash_attention(void);
extern int cudaMalloc(void);
int run(void) {
  return aoti_torch_empty_strided() + aoti_torch_cuda_mm_out() +
         aoti_torch_cuda_index_Tensor() +
         aoti_torch_cuda__scaled_dot_product_flash_attention() + cudaMalloc();
}
"""
SHIM = r"""
int aoti_torch_empty_strided(void) { return 0; }
int aoti_torch_cuda_mm_out(void) { return 0; }
static int aoti_torch_cuda_index_Tensor(void) { return 0; } /* not exported */
int use(void) { return aoti_torch_cuda_index_Tensor(); }
"""


def test_model_imports_lists_only_shim_functions(build_so):
    model = build_so("model.so", MODEL)
    assert model_imports(model) == [
        "aoti_torch_cuda__scaled_dot_product_flash_attention",
        "aoti_torch_cuda_index_Tensor", "aoti_torch_cuda_mm_out",
        "aoti_torch_empty_strided"]


def test_missing_functions_are_listed(build_so):
    model = build_so("model.so", MODEL)
    shim = build_so("libaotrun_shim.so", SHIM)
    exports = load_shim_exports([shim])
    assert "aoti_torch_cuda_index_Tensor" not in exports  # static
    with pytest.raises(MissingShimFunctions) as e:
        check_shim_coverage(model, exports, method="forward")
    assert e.value.missing == [
        "aoti_torch_cuda__scaled_dot_product_flash_attention",
        "aoti_torch_cuda_index_Tensor"]
    msg = str(e.value)
    assert "method 'forward'" in msg and "imports 2 aoti_torch_*" in msg
    assert "\n  aoti_torch_cuda_index_Tensor" in msg
    assert "aoti_torch_cuda_mm_out" not in msg


def test_text_lists_complete_the_library(build_so, tmp_path):
    model = build_so("model.so", MODEL)
    shim = build_so("libaotrun_shim.so", SHIM)
    txt = tmp_path / "fallback_exports.txt"
    txt.write_text("# fallback ops\naoti_torch_cuda_index_Tensor\n\n"
                   "aoti_torch_cuda__scaled_dot_product_flash_attention  # sdpa\n")
    got = check_shim_coverage(model, load_shim_exports([shim, str(txt)]))
    assert len(got) == 4


def test_missing_exports_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_shim_exports([str(tmp_path / "exports.txt")])
