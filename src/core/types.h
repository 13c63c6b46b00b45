/* types.h — forward typedefs of the core structs, so headers never need each other's full types. */
#ifndef HY_CORE_TYPES_H
#define HY_CORE_TYPES_H

typedef struct hy_pool hy_pool_t;
typedef struct hy_array hy_array_t;
typedef struct hy_buf hy_buf_t;
typedef struct hy_seg hy_seg_t;
typedef struct hy_outq hy_outq_t;
typedef struct hy_file hy_file_t;
typedef struct hy_loop hy_loop_t;
typedef struct hy_io hy_io_t;
typedef struct hy_timer hy_timer_t;
typedef struct hy_defer hy_defer_t;
typedef struct hy_sock hy_sock_t;
typedef struct hy_listener hy_listener_t;
typedef struct hy_conf hy_conf_t;
typedef struct hy_directive hy_directive_t;
typedef struct hy_module hy_module_t;
typedef struct hy_cycle hy_cycle_t;
typedef struct hy_req hy_req_t;
typedef struct hy_conn hy_conn_t;

#endif
