#!/usr/bin/env python3
"""Writes the test files of the image file check (itkCudaImageFileCheck.h):
a small 20 x 16 int16 image in every checked layout, valid, and cut short,
corrupt, or with a header whose sizes overflow 64 bits. Standard library
only (struct, gzip, zlib), so the files are written without ITK; the valid
ones are read by ITK in the tests (positive controls).

    python3 apps/testdata/make_file_check_data.py [OUT_DIR]   (default: apps/testdata/filecheck)
"""

import gzip
import pathlib
import struct
import sys
import zlib

NX, NY = 20, 16
PIXELS = struct.pack("<%dh" % (NX * NY), *[(x * 37 + y * 101) % 2000 - 500 for y in range(NY) for x in range(NX)])


def nifti1(dims=(2, NX, NY), bitpix=16, datatype=4, vox_offset=352.0):
    """A NIfTI-1 header (348 bytes) plus the 4-byte extension flag."""
    h = bytearray(348)
    struct.pack_into("<i", h, 0, 348)
    dim = list(dims) + [1] * (8 - len(dims))
    struct.pack_into("<8h", h, 40, *dim)
    struct.pack_into("<h", h, 70, datatype)
    struct.pack_into("<h", h, 72, bitpix)
    struct.pack_into("<8f", h, 76, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    struct.pack_into("<f", h, 108, vox_offset)
    struct.pack_into("<f", h, 112, 1.0)  # scl_slope
    struct.pack_into("<h", h, 254, 1)  # sform_code: scanner
    struct.pack_into("<4f", h, 280, 1.0, 0.0, 0.0, 0.0)
    struct.pack_into("<4f", h, 296, 0.0, 1.0, 0.0, 0.0)
    struct.pack_into("<4f", h, 312, 0.0, 0.0, 1.0, 0.0)
    h[344:348] = b"n+1\0"
    return bytes(h) + b"\0\0\0\0"


def meta(dim_size, compressed=None, data_file="LOCAL", write_size=True):
    lines = [
        "ObjectType = Image",
        "NDims = 2",
        "BinaryData = True",
        "BinaryDataByteOrderMSB = False",
        "CompressedData = %s" % ("True" if compressed is not None else "False"),
    ]
    if compressed is not None and write_size:
        lines.append("CompressedDataSize = %d" % len(compressed))
    lines += [
        "DimSize = %s" % dim_size,
        "ElementSpacing = 1 1",
        "ElementType = MET_SHORT",
        "ElementDataFile = %s" % data_file,
    ]
    return ("\n".join(lines) + "\n").encode()


def nrrd(encoding, data_file=None):
    lines = ["NRRD0004", "type: short", "dimension: 2", "sizes: %d %d" % (NX, NY), "encoding: %s" % encoding,
             "endian: little"]
    if data_file:
        lines.append("data file: %s" % data_file)
    return ("\n".join(lines) + "\n\n").encode()


def corrupt(data, at):
    """Flips bits in the middle of a compressed stream."""
    b = bytearray(data)
    for i in range(at, at + 8):
        b[i] ^= 0x5A
    return bytes(b)


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent / "filecheck")
    out.mkdir(parents=True, exist_ok=True)
    w = lambda name, data: (out / name).write_bytes(data)

    nii = nifti1() + PIXELS
    w("ok.nii", nii)
    w("truncated.nii", nii[:-100])
    w("header_only.nii", nii[:352])
    gz = gzip.compress(nii, mtime=0)
    w("ok.nii.gz", gz)
    w("truncated.nii.gz", gz[: len(gz) // 2])
    w("corrupt.nii.gz", corrupt(gz, len(gz) // 2))
    # 7 axes of 32767 voxels of 64 bits: more than 2^64 bytes
    w("overflow.nii", nifti1(dims=(7,) + (32767,) * 7, bitpix=64, datatype=1280) + PIXELS)

    w("ok.mha", meta("%d %d" % (NX, NY)) + PIXELS)
    w("truncated.mha", meta("%d %d" % (NX, NY)) + PIXELS[:-64])
    z = zlib.compress(PIXELS, 9)
    w("ok_compressed.mha", meta("%d %d" % (NX, NY), compressed=z) + z)
    w("truncated_compressed.mha", meta("%d %d" % (NX, NY), compressed=z) + z[: len(z) // 2])
    # without CompressedDataSize the stream itself must show that it ends early
    w("truncated_nosize.mha", meta("%d %d" % (NX, NY), compressed=z, write_size=False) + z[: len(z) // 2])
    w("corrupt_compressed.mha", meta("%d %d" % (NX, NY), compressed=z) + corrupt(z, len(z) // 2))
    w("overflow.mha", meta("4294967296 4294967296") + PIXELS)  # 2^64 pixels

    w("ok.mhd", meta("%d %d" % (NX, NY), data_file="ok.raw"))
    w("ok.raw", PIXELS)
    w("truncated.mhd", meta("%d %d" % (NX, NY), data_file="truncated.raw"))
    w("truncated.raw", PIXELS[: len(PIXELS) // 3])
    w("ok_z.mhd", meta("%d %d" % (NX, NY), compressed=z, data_file="ok_z.zraw"))
    w("ok_z.zraw", z)
    w("truncated_z.mhd", meta("%d %d" % (NX, NY), compressed=z, data_file="truncated_z.zraw"))
    w("truncated_z.zraw", z[: len(z) - 40])

    w("ok.nrrd", nrrd("raw") + PIXELS)
    w("truncated.nrrd", nrrd("raw") + PIXELS[:-64])
    gzp = gzip.compress(PIXELS, mtime=0)
    w("ok_gzip.nrrd", nrrd("gzip") + gzp)
    w("truncated_gzip.nrrd", nrrd("gzip") + gzp[: len(gzp) // 2])
    w("corrupt_gzip.nrrd", nrrd("gzip") + corrupt(gzp, len(gzp) // 2))


if __name__ == "__main__":
    main()
