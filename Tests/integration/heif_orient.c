/* Writes a HEIC whose primary image carries irot/imir for an EXIF-style orientation (libheif's
 * heif_encoding_options.image_orientation, 1.15+), optionally with an EXIF item whose orientation
 * tag says <exif>: heif_orient <orientation 1-8> <in.ppm> <out.heic> [exif orientation 1-8].
 * The pixels are stored as given; libheif adds the boxes that display them oriented.
 * Built by Tests/integration/test_avif_heic.py (libheif-dev; heif-enc 1.15 cannot write irot). */
#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) { fprintf(stderr, "usage: heif_orient <1-8> in.ppm out.heic\n"); return 2; }
    FILE *f = fopen(argv[2], "rb");
    int w, h, max;
    if (!f || fscanf(f, "P6 %d %d %d", &w, &h, &max) != 3 || max != 255) { fprintf(stderr, "bad ppm\n"); return 1; }
    fgetc(f);
    struct heif_image *img;
    heif_image_create(w, h, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &img);
    heif_image_add_plane(img, heif_channel_interleaved, w, h, 8);
    int stride;
    uint8_t *p = heif_image_get_plane(img, heif_channel_interleaved, &stride);
    for (int y = 0; y < h; y++) if (fread(p + y * stride, 1, (size_t)w * 3, f) != (size_t)w * 3) return 1;
    fclose(f);
    struct heif_context *ctx = heif_context_alloc();
    struct heif_encoder *enc;
    struct heif_error e = heif_context_get_encoder_for_format(ctx, heif_compression_HEVC, &enc);
    if (e.code) { fprintf(stderr, "%s\n", e.message); return 1; }
    heif_encoder_set_lossy_quality(enc, 90);
    struct heif_encoding_options *opt = heif_encoding_options_alloc();
    opt->image_orientation = (enum heif_orientation)atoi(argv[1]);
    e = heif_context_encode_image(ctx, img, enc, opt, NULL);
    if (e.code) { fprintf(stderr, "%s\n", e.message); return 1; }
    if (argc == 5) {
        /* "Exif\0\0" + little-endian TIFF with one IFD0 entry: Orientation (0x0112), SHORT, 1. */
        uint8_t exif[] = {'E','x','i','f',0,0, 'I','I',42,0, 8,0,0,0, 1,0, 0x12,1, 3,0, 1,0,0,0,
                          (uint8_t)atoi(argv[4]),0,0,0, 0,0,0,0};
        struct heif_image_handle *handle;
        heif_context_get_primary_image_handle(ctx, &handle);
        e = heif_context_add_exif_metadata(ctx, handle, exif, sizeof exif);
        if (e.code) { fprintf(stderr, "%s\n", e.message); return 1; }
    }
    e = heif_context_write_to_file(ctx, argv[3]);
    if (e.code) { fprintf(stderr, "%s\n", e.message); return 1; }
    return 0;
}
