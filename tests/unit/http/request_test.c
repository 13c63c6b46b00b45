/* request_test.c — status reason phrases (nginx's wording) and method tokens. */
#include "../harness.h"
#include "http/request.h"

static void test_reason(void)
{
    /* nginx's status lines (ngx_http_header_filter_module.c) */
    is_str(hy_http_reason(200), "OK");
    is_str(hy_http_reason(201), "Created");
    is_str(hy_http_reason(204), "No Content");
    is_str(hy_http_reason(206), "Partial Content");
    is_str(hy_http_reason(301), "Moved Permanently");
    is_str(hy_http_reason(302), "Moved Temporarily");
    is_str(hy_http_reason(303), "See Other");
    is_str(hy_http_reason(304), "Not Modified");
    is_str(hy_http_reason(307), "Temporary Redirect");
    is_str(hy_http_reason(308), "Permanent Redirect");
    is_str(hy_http_reason(400), "Bad Request");
    is_str(hy_http_reason(401), "Unauthorized");
    is_str(hy_http_reason(403), "Forbidden");
    is_str(hy_http_reason(404), "Not Found");
    is_str(hy_http_reason(405), "Not Allowed");
    is_str(hy_http_reason(408), "Request Time-out");
    is_str(hy_http_reason(411), "Length Required");
    is_str(hy_http_reason(412), "Precondition Failed");
    is_str(hy_http_reason(413), "Request Entity Too Large");
    is_str(hy_http_reason(414), "Request-URI Too Large");
    is_str(hy_http_reason(416), "Requested Range Not Satisfiable");
    is_str(hy_http_reason(500), "Internal Server Error");
    is_str(hy_http_reason(501), "Not Implemented");
    is_str(hy_http_reason(502), "Bad Gateway");
    is_str(hy_http_reason(503), "Service Temporarily Unavailable");
    is_str(hy_http_reason(504), "Gateway Time-out");
    is_str(hy_http_reason(505), "HTTP Version Not Supported");
    /* unknown codes */
    ok(hy_http_reason(0) == NULL);
    ok(hy_http_reason(299) == NULL);
    ok(hy_http_reason(499) == NULL);
    ok(hy_http_reason(600) == NULL);
    ok(hy_http_reason(-200) == NULL);
    /* every known phrase is non-empty */
    int empty = 0, known = 0;
    for (int s = 100; s < 600; s++) {
        const char *r = hy_http_reason(s);
        if (r) {
            known++;
            empty += r[0] == '\0';
        }
    }
    ok(known >= 30);
    is_int(empty, 0);
}

static void test_method_id(void)
{
    is_int(hy_http_method_id(HY_STR("GET")), HY_M_GET);
    is_int(hy_http_method_id(HY_STR("HEAD")), HY_M_HEAD);
    is_int(hy_http_method_id(HY_STR("POST")), HY_M_POST);
    is_int(hy_http_method_id(HY_STR("PUT")), HY_M_PUT);
    is_int(hy_http_method_id(HY_STR("DELETE")), HY_M_DELETE);
    is_int(hy_http_method_id(HY_STR("OPTIONS")), HY_M_OPTIONS);
    is_int(hy_http_method_id(HY_STR("PATCH")), HY_M_PATCH);
    is_int(hy_http_method_id(HY_STR("TRACE")), HY_M_TRACE);
    is_int(hy_http_method_id(HY_STR("CONNECT")), HY_M_CONNECT);
    /* methods are case-sensitive (RFC 9110 section 9.1) */
    is_int(hy_http_method_id(HY_STR("get")), HY_M_UNKNOWN);
    is_int(hy_http_method_id(HY_STR("Get")), HY_M_UNKNOWN);
    is_int(hy_http_method_id(HY_STR("GETS")), HY_M_UNKNOWN);
    is_int(hy_http_method_id(HY_STR("GE")), HY_M_UNKNOWN);
    is_int(hy_http_method_id(HY_STR("PROPFIND")), HY_M_UNKNOWN);
    is_int(hy_http_method_id(HY_STR("")), HY_M_UNKNOWN);
    is_int(hy_http_method_id(HY_STR_NULL), HY_M_UNKNOWN);
    hy_str_t part = {(char *)"GETX", 3};
    is_int(hy_http_method_id(part), HY_M_GET); /* counted, not NUL-terminated */
    /* distinct ids */
    ok(HY_M_GET != HY_M_HEAD && HY_M_UNKNOWN == 0);
}

int main(void)
{
    subtest("hy_http_reason", test_reason);
    subtest("hy_http_method_id", test_method_id);
    return done_testing();
}
