#ifndef KILN_HEIF_H
#define KILN_HEIF_H
/* libheif's functions that Kiln calls, loaded on first use (dlopen of libheif.so.1): a server never
 * maps libheif and the codec libraries it pulls in (about fifteen) until a request needs them, which
 * keeps every process's idle memory small (issue 15). The headers are the system's; nothing links
 * against libheif. */
#include <libheif/heif.h>

#ifndef __clang__
#define _Nonnull
#define _Nullable
#endif

typedef struct {
    __typeof__(heif_context_alloc) *_Nonnull heif_context_alloc;
    __typeof__(heif_context_free) *_Nonnull heif_context_free;
    __typeof__(heif_context_get_primary_image_handle) *_Nonnull heif_context_get_primary_image_handle;
    __typeof__(heif_context_read_from_memory_without_copy) *_Nonnull heif_context_read_from_memory_without_copy;
    __typeof__(heif_context_set_max_decoding_threads) *_Nonnull heif_context_set_max_decoding_threads;
    __typeof__(heif_decode_image) *_Nonnull heif_decode_image;
    __typeof__(heif_decoding_options_alloc) *_Nonnull heif_decoding_options_alloc;
    __typeof__(heif_decoding_options_free) *_Nonnull heif_decoding_options_free;
    __typeof__(heif_image_get_bits_per_pixel_range) *_Nonnull heif_image_get_bits_per_pixel_range;
    __typeof__(heif_image_get_height) *_Nonnull heif_image_get_height;
    __typeof__(heif_image_get_plane_readonly) *_Nonnull heif_image_get_plane_readonly;
    __typeof__(heif_image_get_width) *_Nonnull heif_image_get_width;
    __typeof__(heif_image_handle_get_color_profile_type) *_Nonnull heif_image_handle_get_color_profile_type;
    __typeof__(heif_image_handle_get_height) *_Nonnull heif_image_handle_get_height;
    __typeof__(heif_image_handle_get_ispe_height) *_Nonnull heif_image_handle_get_ispe_height;
    __typeof__(heif_image_handle_get_ispe_width) *_Nonnull heif_image_handle_get_ispe_width;
    __typeof__(heif_image_handle_get_metadata) *_Nonnull heif_image_handle_get_metadata;
    __typeof__(heif_image_handle_get_metadata_content_type) *_Nonnull heif_image_handle_get_metadata_content_type;
    __typeof__(heif_image_handle_get_metadata_size) *_Nonnull heif_image_handle_get_metadata_size;
    __typeof__(heif_image_handle_get_metadata_type) *_Nonnull heif_image_handle_get_metadata_type;
    __typeof__(heif_image_handle_get_list_of_metadata_block_IDs) *_Nonnull heif_image_handle_get_list_of_metadata_block_IDs;
    __typeof__(heif_image_handle_get_nclx_color_profile) *_Nonnull heif_image_handle_get_nclx_color_profile;
    __typeof__(heif_image_handle_get_number_of_metadata_blocks) *_Nonnull heif_image_handle_get_number_of_metadata_blocks;
    __typeof__(heif_image_handle_get_raw_color_profile) *_Nonnull heif_image_handle_get_raw_color_profile;
    __typeof__(heif_image_handle_get_raw_color_profile_size) *_Nonnull heif_image_handle_get_raw_color_profile_size;
    __typeof__(heif_image_handle_get_width) *_Nonnull heif_image_handle_get_width;
    __typeof__(heif_image_handle_has_alpha_channel) *_Nonnull heif_image_handle_has_alpha_channel;
    __typeof__(heif_image_handle_release) *_Nonnull heif_image_handle_release;
    __typeof__(heif_image_release) *_Nonnull heif_image_release;
    __typeof__(heif_nclx_color_profile_free) *_Nonnull heif_nclx_color_profile_free;
} kiln_heif_api;

/* The functions, or NULL when libheif.so.1 (or one of its symbols) is missing. Thread-safe; loads once. */
const kiln_heif_api *_Nullable kiln_heif_library(void);

#endif
