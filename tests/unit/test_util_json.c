#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

static void reads_fields_of_the_asked_type_only(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"s\":\"text\",\"n\":2.5,\"b\":true,\"z\":null}");
    assert_string_equal(json_str(o, "s"), "text");
    assert_null(json_str(o, "n"));
    assert_null(json_str(o, "missing"));
    assert_null(json_str(NULL, "s"));
    char *copy = json_strdup(o, "s");
    assert_string_equal(copy, "text");
    assert_ptr_not_equal(copy, json_str(o, "s"));
    free(copy);
    assert_null(json_strdup(o, "b"));
    assert_true(json_num(o, "n") == 2.5);
    assert_true(isnan(json_num(o, "s")));
    assert_true(isnan(json_num(o, "z")));
    assert_true(isnan(json_num(o, "missing")));
    cJSON_Delete(o);
}

static void string_lists_keep_strings_of_arrays_only(void **state)
{
    (void)state;
    cJSON *o = cJSON_Parse("{\"a\":[\"x\",1,\"y\",null],\"obj\":{\"k\":\"v\",\"l\":\"w\"},"
                           "\"e\":[]}");
    int n = -1;
    char **list = json_string_list(cJSON_GetObjectItem(o, "a"), &n);
    assert_int_equal(n, 2);
    assert_string_equal(list[0], "x");
    assert_string_equal(list[1], "y");
    assert_null(list[2]);
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    /* an object's string members are not a list (and must not overrun the empty one) */
    list = json_string_list(cJSON_GetObjectItem(o, "obj"), &n);
    assert_int_equal(n, 0);
    assert_null(list[0]);
    free(list);
    list = json_string_list(cJSON_GetObjectItem(o, "e"), &n);
    assert_int_equal(n, 0);
    free(list);
    list = json_string_list(NULL, &n);
    assert_int_equal(n, 0);
    assert_null(list[0]);
    free(list);
    cJSON_Delete(o);
}

static void writes_strings_or_null_and_text_with_a_newline(void **state)
{
    (void)state;
    cJSON *o = cJSON_CreateObject();
    json_add_str_or_null(o, "a", "x");
    json_add_str_or_null(o, "b", NULL);
    cJSON_AddItemToObject(o, "c", json_str_or_null(NULL));
    char *text = json_text(o); /* o is deleted: ASan reports a leak otherwise */
    assert_string_equal(text, "{\n\t\"a\":\t\"x\",\n\t\"b\":\tnull,\n\t\"c\":\tnull\n}\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_fields_of_the_asked_type_only),
        cmocka_unit_test(string_lists_keep_strings_of_arrays_only),
        cmocka_unit_test(writes_strings_or_null_and_text_with_a_newline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
