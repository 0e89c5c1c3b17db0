"""Writes stand-ins for torchvision's test/assets images into ASSETS_DIR.

The source snapshots leave test/assets out (tests/data/sources/README.md), and
test/test_image.py's png and jpeg cases read the images in the folders it globs there: any
.jpg under assets/ (decoding), RGB .png files under fakedata/imagefolder/ (encode, write),
every .png under fakedata/ (decoding, in every mode), .jpg files under encode_jpeg/. These
are smooth gradients with some texture, as photographs are, in the modes upstream's files
have (RGB and greyscale JPEGs, RGB, RGBA and greyscale PNGs). The cases that need one specific
upstream file (a damaged or interlaced PNG) have none here; the caller deselects them. No
16-bit PNG: test_decode_png compares one with Pillow's 8-bit reading of it, which upstream's
own 16-bit file is made to agree with (a greyscale one does not: Pillow clips it).

Usage: python torchvision_test_images.py ASSETS_DIR   (needs Pillow and numpy)
"""
import os
import sys

import numpy as np
from PIL import Image


def pattern(height, width, channels, seed):
    """A smooth pattern: gradients and low-frequency waves, a little noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    planes = []
    for c in range(channels):
        fy, fx = rng.uniform(0.01, 0.05, size=2)
        wave = np.sin(x * fx + c) * np.cos(y * fy - c)
        ramp = (x / width + y / height) / 2
        planes.append(127 * wave + 100 * ramp + 60 + rng.normal(0, 2, size=(height, width)))
    img = np.clip(np.stack(planes, axis=-1), 0, 255).astype(np.uint8)
    return img[..., 0] if channels == 1 else img


def save(path, array, **options):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(array).save(path, **options)  # the mode follows the array: L, RGB, RGBA


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    imagefolder = os.path.join(root, "fakedata", "imagefolder")
    save(os.path.join(imagefolder, "a", "rgb_64x48.png"), pattern(48, 64, 3, 1))
    save(os.path.join(imagefolder, "b", "rgb_101x77.png"), pattern(77, 101, 3, 2))
    save(os.path.join(root, "fakedata", "logos", "rgba_80x60.png"), pattern(60, 80, 4, 3))
    save(os.path.join(root, "fakedata", "logos", "gray_90x50.png"), pattern(50, 90, 1, 4))
    save(os.path.join(root, "encode_jpeg", "rgb_517x306.jpg"), pattern(306, 517, 3, 6), quality=90)
    save(os.path.join(root, "encode_jpeg", "rgb_64x64.jpg"), pattern(64, 64, 3, 7), quality=75)
    save(os.path.join(root, "gray_120x90.jpg"), pattern(90, 120, 1, 8), quality=85)
    save(os.path.join(root, "rgb_200x133.jpg"), pattern(133, 200, 3, 9), quality=95)


if __name__ == "__main__":
    main()
