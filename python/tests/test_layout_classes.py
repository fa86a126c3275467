# SPDX-License-Identifier: Apache-2.0
"""The layout descriptor classes: construction, the core's checks, value
semantics, reprs, authoring through hurray.Tensor(layout=...), and round
trips through files and streams."""

import copy
import pickle
import struct

import numpy as np
import pytest

import hurray

# One instance of every class (and a few variants), each different from the others.
SAMPLES = [
    hurray.RowMajorLayout(),
    hurray.ColMajorLayout(),
    hurray.StridedLayout([3, -1]),
    hurray.TiledLayout([2, 3]),
    hurray.TiledLayout([2, 3], outer_layout="strided", outer_strides=[1, 5]),
    hurray.TiledLayout([4, 4], inner_layout="tiled", inner_tiled=hurray.TiledLayout([2, 2], inner_layout="col_major")),
    hurray.MortonLayout([2, 3]),
    hurray.HilbertLayout(2, 3),
    hurray.CooLayout(nnz=5),
    hurray.CooLayout(nnz=5, is_sorted=True),
    hurray.CsrLayout(nnz=5),
    hurray.CscLayout(nnz=5),
    hurray.CsfLayout(nnz=5, mode_order=[1, 0, 2]),
    hurray.BlockPagedLayout(8, 4, 0, 2, kv_role="value", layer_index=7, block_table_index_type="uint64"),
    hurray.CompositeLayout("partition", 3),
    hurray.CompositeLayout("overlay", 2, combine_op="replace"),
    hurray.PrivateExtensionLayout(0xF7, 12, b"\x09"),
    hurray.UnknownLayout(0x30, b"\x01"),
]


@pytest.mark.parametrize("layout", SAMPLES, ids=repr)
def test_value_semantics(layout):
    assert isinstance(layout, hurray.Layout)
    twin = copy.copy(layout)
    assert twin == layout and hash(twin) == hash(layout)
    again = pickle.loads(pickle.dumps(layout))
    assert again == layout and hash(again) == hash(layout) and type(again) is type(layout)
    assert layout != layout.name and layout != layout.tag
    assert sum(other == layout for other in SAMPLES) == 1
    with pytest.raises(AttributeError):
        layout.foo = 1
    with pytest.raises(AttributeError):
        del layout.params
    assert isinstance(layout.params, dict)


def test_names_tags_and_categories():
    got = [(s.name, s.tag, s.buffer_count, s.is_dense, s.is_virtual) for s in SAMPLES]
    assert got == [
        ("row_major", 0x01, 1, True, False), ("col_major", 0x02, 1, True, False),
        ("strided", 0x03, 1, True, False), ("tiled", 0x04, 1, True, False), ("tiled", 0x04, 1, True, False),
        ("tiled", 0x04, 1, True, False), ("morton", 0x05, 1, True, False), ("hilbert", 0x40, 1, True, False),
        ("coo", 0x06, 2, False, False), ("coo", 0x06, 2, False, False), ("csr", 0x07, 3, False, False),
        ("csc", 0x08, 3, False, False), ("csf", 0x09, 7, False, False), ("block_paged", 0x0A, 3, False, False),
        ("composite", 0x0B, 0, False, True), ("composite", 0x0B, 0, False, True),
        ("extension", 0xF7, None, False, False), ("extension", 0x30, None, False, False),
    ]


def test_reprs():
    assert [repr(s) for s in SAMPLES] == [
        "RowMajorLayout()",
        "ColMajorLayout()",
        "StridedLayout(strides=(3, -1))",
        "TiledLayout(tile_shape=(2, 3), outer_layout='row_major', inner_layout='row_major')",
        "TiledLayout(tile_shape=(2, 3), outer_layout='strided', inner_layout='row_major', outer_strides=(1, 5))",
        "TiledLayout(tile_shape=(4, 4), outer_layout='row_major', inner_layout='tiled', "
        "inner_tiled=TiledLayout(tile_shape=(2, 2), outer_layout='row_major', inner_layout='col_major'))",
        "MortonLayout(morton_bits=(2, 3))",
        "HilbertLayout(hilbert_order=2, hilbert_rank=3)",
        "CooLayout(nnz=5, is_sorted=False)",
        "CooLayout(nnz=5, is_sorted=True)",
        "CsrLayout(nnz=5)",
        "CscLayout(nnz=5)",
        "CsfLayout(nnz=5, mode_order=(1, 0, 2))",
        "BlockPagedLayout(page_size=8, num_pages=4, paged_axis=0, num_seqs=2, kv_role='value', layer_index=7, "
        "block_table_index_type='uint64')",
        "CompositeLayout(composition_rule='partition', member_count=3)",
        "CompositeLayout(composition_rule='overlay', member_count=2, combine_op='replace')",
        "PrivateExtensionLayout(tag=0xF7, extension_layout_id=12, extension_data=1 bytes)",
        "UnknownLayout(tag=0x30, raw_bytes=1 bytes)",
    ]
    assert repr(hurray.StridedLayout([7])) == "StridedLayout(strides=(7,))"


def test_parameters_are_reachable():
    tiled = SAMPLES[5]
    assert tiled.tile_shape == (4, 4) and tiled.inner_layout == "tiled" and tiled.outer_strides is None
    assert tiled.inner_tiled == hurray.TiledLayout([2, 2], inner_layout="col_major")
    assert SAMPLES[4].outer_strides == (1, 5) and SAMPLES[4].inner_strides is None
    paged = SAMPLES[13]
    assert (paged.page_size, paged.num_pages, paged.paged_axis, paged.num_seqs) == (8, 4, 0, 2)
    assert (paged.kv_role, paged.layer_index, paged.block_table_index_type) == ("value", 7, "uint64")
    defaults = hurray.BlockPagedLayout(8, 4, 0, 2)
    assert (defaults.kv_role, defaults.layer_index, defaults.block_table_index_type) == ("key", None, "uint32")
    assert SAMPLES[15].combine_op == "replace" and SAMPLES[14].combine_op is None
    assert SAMPLES[16].extension_layout_id == 12 and SAMPLES[16].extension_data == b"\x09"
    assert SAMPLES[17].raw_bytes == b"\x01"
    assert hurray.CsfLayout(np.uint64(3), np.array([2, 1, 0])).mode_order == (2, 1, 0)
    assert hurray.StridedLayout([0, -4]).params == {"strides": (0, -4)}
    assert hurray.TiledLayout([2], outer_strides=[], inner_strides=[]) == hurray.TiledLayout([2])


def test_the_core_checks_parameters_at_construction():
    bad = [
        lambda: hurray.TiledLayout([4, 0]),
        lambda: hurray.TiledLayout([4, 4], inner_layout="tiled"),  # no nested level
        lambda: hurray.TiledLayout([4, 4], inner_tiled=hurray.TiledLayout([2, 2])),  # nested but not "tiled"
        lambda: hurray.TiledLayout([4, 4], inner_layout="tiled", inner_tiled=hurray.TiledLayout([2])),  # ranks
        lambda: hurray.TiledLayout([4, 4], inner_layout="strided"),  # strides missing
        lambda: hurray.TiledLayout([4, 4], outer_strides=[1, 1]),  # strides that do not apply
        lambda: hurray.TiledLayout([4, 4], outer_layout="tiled"),
        lambda: hurray.MortonLayout([3, 0]),
        lambda: hurray.MortonLayout([32, 32]),  # 2^64 elements
        lambda: hurray.HilbertLayout(0, 2),
        lambda: hurray.HilbertLayout(3, 1),
        lambda: hurray.HilbertLayout(33, 2),
        lambda: hurray.PrivateExtensionLayout(0x20, 1),
        lambda: hurray.PrivateExtensionLayout(0x01, 1),  # a private layout is never row-major
        lambda: hurray.PrivateExtensionLayout(0x03, 1),
        lambda: hurray.UnknownLayout(0x00),
        lambda: hurray.UnknownLayout(0xFF),
    ]
    for make in bad:
        with pytest.raises(hurray.InvalidDescriptorError):
            make()
    deep = hurray.TiledLayout([1])
    for _ in range(7):
        deep = hurray.TiledLayout([1], inner_layout="tiled", inner_tiled=deep)
    with pytest.raises(hurray.InvalidDescriptorError, match="nested"):
        hurray.TiledLayout([1], inner_layout="tiled", inner_tiled=deep)  # the ninth level


def test_argument_errors():
    with pytest.raises(TypeError, match="cannot be constructed"):
        hurray.Layout()
    for make in (lambda: hurray.CsrLayout(nnz=1.0), lambda: hurray.StridedLayout("12"),
                 lambda: hurray.StridedLayout(3), lambda: hurray.TiledLayout([2], inner_tiled="x"),
                 lambda: hurray.TiledLayout([2], outer_layout=1), lambda: hurray.UnknownLayout(0x30, 5)):
        with pytest.raises(TypeError):
            make()
    for make in (lambda: hurray.CooLayout(nnz=-1), lambda: hurray.CsrLayout(nnz=1 << 64),
                 lambda: hurray.MortonLayout([-2]), lambda: hurray.UnknownLayout(256)):
        with pytest.raises(OverflowError):
            make()
    with pytest.raises(hurray.InvalidDescriptorError):  # also an InvalidDescriptorError
        hurray.CooLayout(nnz=-1)
    for make in (lambda: hurray.TiledLayout([2, 2], inner_layout="z_order"),
                 lambda: hurray.BlockPagedLayout(8, 4, 0, 2, kv_role="query"),
                 lambda: hurray.BlockPagedLayout(8, 4, 0, 2, block_table_index_type="int32"),
                 lambda: hurray.BlockPagedLayout(8, 4, 0, 2, layer_index=0xFFFFFFFF),
                 lambda: hurray.CompositeLayout("stack", 2),
                 lambda: hurray.CompositeLayout("overlay", 2),
                 lambda: hurray.CompositeLayout("overlay", 2, combine_op="max"),
                 lambda: hurray.CompositeLayout("partition", 2, combine_op="add")):
        with pytest.raises(ValueError):
            make()
    with pytest.raises(ValueError, match="HilbertLayout"):
        hurray.UnknownLayout(0x40)
    with pytest.raises(ValueError, match="PrivateExtensionLayout"):
        hurray.UnknownLayout(0xF4)


def _round_trip_file(tmp_path, tensor):
    hurray.save(tmp_path / "t.hrry", {"t": tensor})
    return hurray.load(tmp_path / "t.hrry")["t"]


def _round_trip_stream(tensor):
    writer = hurray.StreamWriter()
    writer.write(tensor)
    writer.finish()
    return list(hurray.StreamReader(writer.getvalue()))[0]


DENSE = [
    (hurray.TiledLayout([2, 2]), [4, 4]),
    (hurray.TiledLayout([3, 2], outer_layout="col_major", inner_layout="col_major"), [4, 4]),
    (hurray.TiledLayout([2, 2], inner_layout="strided", inner_strides=[1, 2]), [4, 4]),
    (hurray.TiledLayout([4, 4], inner_layout="tiled", inner_tiled=hurray.TiledLayout([2, 1])), [4, 4]),
    (hurray.MortonLayout([2, 2]), [4, 3]),
    (hurray.HilbertLayout(2, 2), [4, 4]),
]


@pytest.mark.parametrize(("layout", "shape"), DENSE, ids=lambda v: repr(v))
def test_dense_layouts_author_convert_and_round_trip(tmp_path, layout, shape):
    values = np.arange(64, dtype=np.float32)
    t = hurray.Tensor(values, hurray.float32, shape, layout=layout)
    assert t.layout == layout and type(t.layout) is type(layout) and t.buffer_count == 1
    assert "layout='" + layout.name + "'" in repr(t)
    dense = np.asarray(t)  # a row-major copy
    assert dense.shape == tuple(shape) and sorted(dense.ravel().tolist()) == sorted(set(dense.ravel().tolist()))
    assert np.array_equal(t.to_dense(), dense)
    for back in (_round_trip_file(tmp_path, t), _round_trip_stream(t)):
        assert back.layout == layout and np.array_equal(np.asarray(back), dense)
    again = hurray.Tensor(values, hurray.float32, shape, layout=t.layout)
    assert again._wire()[0] == t._wire()[0]


def test_tiled_element_order():
    # 2x2 tiles of a 2x4 matrix, tiles and elements row-major: memory holds tile (0,0) then tile (0,1).
    t = hurray.Tensor(np.arange(8, dtype=np.int32), hurray.int32, [2, 4], layout=hurray.TiledLayout([2, 2]))
    assert np.asarray(t).tolist() == [[0, 1, 4, 5], [2, 3, 6, 7]]


def test_shape_rules_are_checked_when_a_tensor_is_built():
    for layout, shape in [(hurray.TiledLayout([2, 2]), [16]), (hurray.MortonLayout([1, 1]), [4, 4]),
                          (hurray.HilbertLayout(3, 2), [4, 4]), (hurray.StridedLayout([1]), [2, 2]),
                          (hurray.CsfLayout(0, [0, 1]), [2, 2])]:
        with pytest.raises(hurray.InvalidDescriptorError):
            hurray.Tensor(bytes(256), hurray.float32, shape, layout=layout,
                          aux_buffers=[bytes(16)] * (layout.buffer_count - 1))


def _paged(layout=None, pool=None, table=None, seq_ptr=None, shape=(3, 1, 2)):
    layout = layout or hurray.BlockPagedLayout(page_size=2, num_pages=2, paged_axis=0, num_seqs=1)
    pool = np.arange(8, dtype=np.float32) if pool is None else pool
    table = np.array([1, 0], np.uint32) if table is None else table
    seq_ptr = np.array([0, 2], np.uint32) if seq_ptr is None else seq_ptr
    return hurray.Tensor(pool, hurray.float32, list(shape), aux_buffers=[table, seq_ptr], layout=layout)


def test_block_paged_authoring(tmp_path):
    t = _paged()
    assert isinstance(t.layout, hurray.BlockPagedLayout) and t.layout.num_pages == 2 and t.buffer_count == 3
    assert t.to_dense().reshape(-1).tolist() == [4, 5, 6, 7, 0, 1]  # page 1 first, then page 0
    assert _round_trip_file(tmp_path, t).layout == t.layout
    assert _round_trip_stream(t).layout == t.layout
    with pytest.raises(hurray.BufferError, match="page_pool"):
        _paged(pool=np.zeros(2, np.float32))
    with pytest.raises(hurray.BufferError, match="seq_ptr"):
        _paged(seq_ptr=np.zeros(1, np.uint32))
    with pytest.raises(hurray.InvalidDescriptorError, match="rank"):
        _paged(shape=(3, 2))
    with pytest.raises(hurray.InvalidDescriptorError, match="paged_axis"):
        _paged(layout=hurray.BlockPagedLayout(2, 2, 1, 1))
    with pytest.raises(hurray.HurrayError):  # a page id past num_pages: the data rules run
        _paged(table=np.array([0, 5], np.uint32))


def test_sparse_size_errors_name_the_buffer():
    values = struct.pack("2f", 1, 2)
    with pytest.raises(hurray.BufferError, match=r"buffer 0, values"):
        hurray.Tensor(values, hurray.float32, [4, 4], aux_buffers=[bytes(96)], layout=hurray.CooLayout(nnz=3))
    with pytest.raises(hurray.BufferError, match=r"buffer 1, indices"):
        hurray.Tensor(values, hurray.float32, [4, 4], aux_buffers=[bytes(16)], layout=hurray.CooLayout(nnz=2))
    with pytest.raises(hurray.BufferError, match=r"buffer 1, row_indices"):
        hurray.Tensor(values, hurray.float32, [2, 2], aux_buffers=[bytes(8), bytes(24)],
                      layout=hurray.CscLayout(nnz=2))
    with pytest.raises(hurray.InvalidDescriptorError, match="3 buffers; 2 given"):
        hurray.Tensor(values, hurray.float32, [2, 2], aux_buffers=[bytes(16)], layout=hurray.CscLayout(nnz=2))


def test_layout_must_be_a_layout_object():
    for value in ("row_major", 1, object(), hurray.RowMajorLayout):
        with pytest.raises(TypeError, match="hurray.Layout"):
            hurray.Tensor(bytes(16), hurray.float32, [4], layout=value)


def test_composite_heads_cannot_be_authored():
    with pytest.raises(hurray.UnsupportedError, match="owns no buffers"):
        hurray.Tensor(bytes(16), hurray.float32, [4], layout=hurray.CompositeLayout("overlay", 2, combine_op="add"))


def test_private_extension_authoring(tmp_path):
    layout = hurray.PrivateExtensionLayout(0xF2, 77, b"meta")
    t = hurray.Tensor(bytes(16), hurray.float32, [4], layout=layout)
    assert t.layout == layout and t.layout.extension_data == b"meta" and t.buffer_count == 1
    assert "layout='extension'" in repr(t)
    with pytest.raises(hurray.UnsupportedError):
        np.asarray(t)  # its element order is private
    hurray.save(tmp_path / "p.hrry", {"p": t})  # a writer accepts its own extensions
    with pytest.raises(hurray.UnsupportedError, match="not recognised"):
        hurray.load(tmp_path / "p.hrry")  # a strict reader does not know id 77


def test_unknown_layout_is_carried_but_cannot_be_written(tmp_path):
    layout = hurray.UnknownLayout(0x2A, b"\x05\x06")
    t = hurray.Tensor(bytes(16), hurray.float32, [4], aux_buffers=[bytes(3)], layout=layout)
    assert t.layout == layout and isinstance(t.layout, hurray.UnknownLayout) and t.buffer_count == 2
    assert bytes(t.buffer(1)) == bytes(3)
    with pytest.raises(hurray.UnsupportedError):
        t.to_dense()
    with pytest.raises(hurray.InvalidDescriptorError, match="0x2A"):
        hurray.save(tmp_path / "u.hrry", {"u": t})
    assert not (tmp_path / "u.hrry").exists()
    with pytest.raises(hurray.HurrayError, match="0x2A"):
        _round_trip_stream(t)


def test_layouts_read_from_files_and_streams(tmp_path):
    values = struct.pack("2f", 5, 7)
    tensors = {
        "csf": hurray.Tensor(struct.pack("4f", 1, 2, 3, 4), hurray.float32, [2, 3, 4], aux_buffers=[
            struct.pack("2Q", 0, 2), struct.pack("2Q", 0, 1), struct.pack("3Q", 0, 2, 3), struct.pack("3Q", 0, 2, 1),
            struct.pack("4Q", 0, 1, 2, 4), struct.pack("4Q", 1, 3, 0, 2)], layout=hurray.CsfLayout(4, [0, 1, 2])),
        "csr": hurray.Tensor(values, hurray.float32, [2, 2], aux_buffers=[struct.pack("2Q", 0, 1),
                                                                         struct.pack("3Q", 0, 1, 2)],
                             layout=hurray.CsrLayout(nnz=2)),
        "col": hurray.Tensor(bytes(16), hurray.float32, [2, 2], layout=hurray.ColMajorLayout()),
    }
    assert "layout='col_major'" in repr(tensors["col"])  # one name for the class, reprs and messages
    hurray.save(tmp_path / "c.hrry", {"col": tensors["col"]})
    assert hurray.open(tmp_path / "c.hrry").info("col")["layout"] == "col_major"
    loaded = _round_trip_file(tmp_path, tensors["csf"])
    assert loaded.layout == hurray.CsfLayout(4, [0, 1, 2]) and loaded.layout.mode_order == (0, 1, 2)
    for t in tensors.values():
        back = _round_trip_stream(t)
        assert back.layout == t.layout and type(back.layout) is type(t.layout)
        rebuilt = hurray.Tensor(t.buffer(0), t.dtype, list(t.shape), layout=back.layout,
                                aux_buffers=[t.buffer(i) for i in range(1, t.buffer_count)])
        assert rebuilt._wire()[0] == t._wire()[0]


def test_composite_layout_of_a_read_composite():
    a = hurray.Tensor(np.ones(2, np.float32), hurray.float32, [2])
    b = hurray.Tensor(np.zeros(2, np.float32), hurray.float32, [2])
    writer = hurray.StreamWriter()
    writer.write(hurray.Composite("group", [2], "float32", [a, b]))
    writer.finish()
    item = list(hurray.StreamReader(writer.getvalue()))[0]
    assert isinstance(item.layout, hurray.CompositeLayout) and item.layout.is_virtual
    assert item.layout == hurray.CompositeLayout("group", 2) and item.layout.combine_op is None


def test_quantization_parameters_come_after_the_layout_buffers():
    csc_buffers = [struct.pack("2Q", 1, 0), struct.pack("3Q", 0, 1, 2)]
    with pytest.raises(hurray.InvalidDescriptorError, match="quantization buffer index 1 .* csc layout's own"):
        hurray.Tensor(struct.pack("2b", 3, 4), hurray.int8, [2, 2], aux_buffers=csc_buffers,
                      layout=hurray.CscLayout(nnz=2), quantization=hurray.PerChannelAffine.symmetric(0, 1))
    t = hurray.Tensor(struct.pack("2b", 3, 4), hurray.int8, [2, 2], aux_buffers=csc_buffers + [np.ones(2, np.float32)],
                      layout=hurray.CscLayout(nnz=2), quantization=hurray.PerChannelAffine.symmetric(1, 3))
    assert t.layout == hurray.CscLayout(nnz=2) and t.buffer_count == 4
