"""Identity fields of a point's result."""

from harness.point.record.result import spec_decoding_label


def test_spec_decoding_labels_follow_inferencex():
    assert spec_decoding_label("NEXTN") == "mtp"
    assert spec_decoding_label("DFLASH") == "dflash"
    assert spec_decoding_label("EAGLE3") == "eagle3"
    assert spec_decoding_label(None) == "none"
