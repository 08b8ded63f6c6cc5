#include "airtime/html/xml_check.h"

#include <gtest/gtest.h>

namespace airtime {
namespace {

TEST(CheckWellFormedXml, AcceptsNestedElementsAttributesAndEntities) {
  EXPECT_TRUE(CheckWellFormedXml("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/></head>"
                                 "<body><p a='1' b=\"x &amp; y\">a &lt; b &#39; &#x41;</p>"
                                 "<!-- note --></body></html>\n")
                  .ok());
}

TEST(CheckWellFormedXml, RefusesWhatAnXmlParserRefuses) {
  for (const char* bad : {
           "<a><b></a></b>",        // crossed
           "<a>",                   // never closed
           "<a></a><b></b>",        // two roots
           "<a x=1></a>",           // unquoted attribute
           "<a x=\"1\" x=\"2\"/>",  // attribute twice
           "<a>&nbsp;</a>",         // not a predefined entity
           "<a>a & b</a>",          // bare ampersand
           "<a x=\"<\"/>",          // '<' in a value
           "text<a/>",              // text outside the root
           "",                      // nothing
       }) {
    EXPECT_FALSE(CheckWellFormedXml(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace airtime
