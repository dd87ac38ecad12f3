"""Parsing the constant table out of a generated wrapper.cpp (a small sample
written for these tests in the shape torch 2.11 generates)."""

import pytest

from aotrun_export.wrapper_constants import (WrapperParseError, blob_records,
                                             parse_wrapper_source)

SAMPLE = r'''
AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,
                                   const std::string& device_str,
                                   std::optional<std::string> cubin_dir)
    : AOTInductorModelBase(2,
                           1,
                           3,
                           device_str,
                           std::move(cubin_dir),
                           false) {
    inputs_info_[0].name = "arg5_1";
    inputs_info_[1].name = "arg6_1";
    constants_info_[0].name = "enc_weight";
    constants_info_[0].dtype = cached_torch_dtype_float32;
    constants_info_[0].device_type = cached_torch_device_type_cuda;
    constants_info_[0].offset = 0;
    constants_info_[0].data_size = 24;
    constants_info_[0].from_folded = false;
    constants_info_[0].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::Parameter);
    constants_info_[0].shape = {2, 3};
    constants_info_[0].stride = {3, 1};
    constants_info_[0].layout = static_cast<int32_t>(cached_torch_layout_strided);
    constants_info_[0].original_fqn = "enc.weight";
    constants_info_[1].name = "_FOLDED_CONST_x";
    constants_info_[1].dtype = cached_torch_dtype_float64;
    constants_info_[1].device_type = cached_torch_device_type_cuda;
    constants_info_[1].offset = 0;
    constants_info_[1].data_size = 8;
    constants_info_[1].from_folded = true;
    constants_info_[1].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::FoldedConstant);
    constants_info_[1].shape = {};
    constants_info_[1].stride = {};
    constants_info_[1].layout = static_cast<int32_t>(cached_torch_layout_strided);
    constants_info_[1].original_fqn = "_FOLDED_CONST_x";
    constants_info_[2].name = "pred";
    constants_info_[2].dtype = cached_torch_dtype_bool;
    constants_info_[2].device_type = cached_torch_device_type_cpu;
    constants_info_[2].offset = 2;
    constants_info_[2].data_size = 64;
    constants_info_[2].from_folded = false;
    constants_info_[2].type = static_cast<int32_t>(torch::aot_inductor::ConstantType::Buffer);
    constants_info_[2].shape = {};
    constants_info_[2].stride = {};
    constants_info_[2].layout = static_cast<int32_t>(cached_torch_layout_strided);
    constants_info_[2].original_fqn = "gate.pred";
    update_constants_map(std::move(constants_map));
    outputs_info_[0].name = "output0";
}
'''


def test_parses_every_field():
    w = parse_wrapper_source(SAMPLE)
    assert (w.num_inputs, w.num_outputs) == (2, 1)
    assert w.input_names == ["arg5_1", "arg6_1"]
    assert w.output_names == ["output0"]
    c0, c1, c2 = w.constants
    assert (c0.name, c0.original_fqn, c0.dtype, c0.device) == (
        "enc_weight", "enc.weight", "float32", "cuda")
    assert (c0.shape, c0.stride, c0.offset, c0.data_size) == ((2, 3), (3, 1), 0, 24)
    assert c0.type == "parameter" and not c0.from_folded
    assert c1.from_folded and c1.type == "folded_constant" and c1.shape == ()
    assert (c2.device, c2.dtype, c2.type, c2.offset) == ("cpu", "bool", "buffer", 2)


def test_blob_records_skip_folded_constants():
    w = parse_wrapper_source(SAMPLE)
    blob = bytes(range(24)) + b"\x01" + b"\0" * 63
    rec = blob_records(w, blob)
    assert sorted(rec) == [0, 2]
    assert rec[0] == bytes(range(24)) and rec[2][0] == 1 and len(rec[2]) == 64
    with pytest.raises(WrapperParseError, match="needs bytes 24..88 but the blob has 30"):
        blob_records(w, blob[:30])
    with pytest.raises(WrapperParseError, match="89 bytes, but the constants use 88"):
        blob_records(w, blob + b"\0")


@pytest.mark.parametrize("edit,needle", [
    (lambda s: s.replace("                           3,\n", "                           4,\n"),
     r"has 4 constants but constants_info_ sets indices \[0, 1, 2\]"),
    (lambda s: s.replace('    constants_info_[2].original_fqn = "gate.pred";\n', ""),
     r"constants_info_\[2\] \('pred'\) has no original_fqn"),
    (lambda s: s.replace("ConstantType::Buffer", "ConstantType::Weird"),
     r"constants_info_\[2\].type: unknown constant type"),
    (lambda s: s.replace("data_size = 24;", "data_size = many;"),
     r"constants_info_\[0\].data_size: expected an integer"),
    (lambda s: s.replace("stride = {3, 1};", "stride = {1};"),
     "constant 'enc_weight' has 2 sizes but 1 strides"),
    (lambda s: s.replace("AOTInductorModelBase(", "SomethingElse("),
     r"no AOTInductorModelBase\(...\)"),
])
def test_malformed_tables_name_the_problem(edit, needle):
    with pytest.raises(WrapperParseError, match=needle):
        parse_wrapper_source(edit(SAMPLE), "m.wrapper.cpp")


def test_string_escapes():
    s = SAMPLE.replace('"enc.weight"', r'"a\"b\\c"')
    assert parse_wrapper_source(s).constants[0].original_fqn == 'a"b\\c'
