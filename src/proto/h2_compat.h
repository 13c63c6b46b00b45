/* h2_compat.h — the few places where libnghttp2's API differs between the 1.52 Debian 12 ships and current
 * releases: 1.60 renamed the callbacks and calls that take sizes to their nghttp2_ssize ("2") forms and
 * deprecated the ssize_t ones. proto/h2.c is written against these names only. */
#ifndef HY_PROTO_H2_COMPAT_H
#define HY_PROTO_H2_COMPAT_H

#include <nghttp2/nghttp2.h>

/* nghttp2_option_set_max_continuations came with 1.61 and Debian 12's 1.52 has it backported (CVE-2024-28182) */
#define hy_ng_option_set_max_continuations nghttp2_option_set_max_continuations

#if NGHTTP2_VERSION_NUM >= 0x013c00
typedef nghttp2_ssize hy_ng_ssize;
typedef nghttp2_data_provider2 hy_ng_data_provider;
#define hy_ng_mem_recv nghttp2_session_mem_recv2
#define hy_ng_mem_send nghttp2_session_mem_send2
#define hy_ng_submit_response nghttp2_submit_response2
#define hy_ng_set_data_source_read_length_cb nghttp2_session_callbacks_set_data_source_read_length_callback2
#else
typedef ssize_t hy_ng_ssize;
typedef nghttp2_data_provider hy_ng_data_provider;
#define hy_ng_mem_recv nghttp2_session_mem_recv
#define hy_ng_mem_send nghttp2_session_mem_send
#define hy_ng_submit_response nghttp2_submit_response
#define hy_ng_set_data_source_read_length_cb nghttp2_session_callbacks_set_data_source_read_length_callback
#endif

#endif
