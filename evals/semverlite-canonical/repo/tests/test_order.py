from semverlite import compare, is_newer, latest, sort_versions


def test_compare_patch_releases():
    assert compare("1.2.3", "1.2.4") == -1
    assert compare("1.2.4", "1.2.3") == 1


def test_compare_same_version_with_and_without_v():
    assert compare("v3.1.0", "3.1.0") == 0


def test_is_newer_across_major_versions():
    assert is_newer("2.0.0", "1.9.9")
    assert not is_newer("1.9.9", "2.0.0")


def test_sort_and_latest():
    assert sort_versions(["1.3.0", "1.1.0", "1.2.5"]) == ["1.1.0", "1.2.5", "1.3.0"]
    assert latest(["0.9.1", "0.9.3", "0.9.2"]) == "0.9.3"
