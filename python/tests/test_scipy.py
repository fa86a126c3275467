

def test_components_keep_the_device_label():
    t = hurray.Tensor(np.array([1.0, 2.0]), hurray.float64, [2, 3], device=hurray.Device("cuda", 0),
                      aux_buffers=[np.array([0, 1], np.uint64), np.array([0, 1, 2], np.uint64)],
                      layout=hurray.CsrLayout(nnz=2))
    assert {str(c.device) for c in (t.values, t.col_indices, t.row_ptr)} == {"cuda"}
    with pytest.raises(hurray.UnsupportedError, match="cuda"):
        t.to_scipy()
