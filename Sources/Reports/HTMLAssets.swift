/// The HTML report's inline style and script (the page loads nothing from anywhere).
///
/// The script lays every lane out again at its box's width (so text keeps its size on a
/// narrow window instead of shrinking with a scaled drawing), on one time window shared by
/// all lanes: zoom and pan change that window for every lane at once. Markers that would
/// overlap move down a row, never sideways, so a marker's x is always its time. After each
/// layout it writes each marker's x into `data-x` (and `data-level`), and sets
/// `data-layout="done"` on the body: a browser test reads them from the DOM.
enum HTMLAssets {
    static let style = """
        *{box-sizing:border-box}
        body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1500px;padding:16px 24px;color:#1f2328;background:#f6f7f9}
        h1{font-size:22px;margin:0 0 2px} h2{font-size:18px;margin:0 0 4px} h3{font-size:15px;margin:14px 0 4px}
        .meta{color:#57606a;margin:2px 0;overflow-wrap:anywhere} .warn{color:#9a6700}
        .ok{color:#1a7f37} .bad{color:#c62828} .warnc{color:#bc4c00}
        section{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:12px 16px;margin:14px 0}
        .verdict{font-weight:600;font-size:16px;margin:4px 0 8px}
        table{border-collapse:collapse;font-size:14px} th,td{text-align:left;padding:3px 10px 3px 0;border-bottom:1px solid #eaeef2;vertical-align:top}
        th{color:#57606a;font-weight:600} .scroll{overflow-x:auto}
        #rules tr[data-rule]{cursor:pointer} #rules tr[data-rule]:hover{background:#f6f8fa}
        code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f0f2f4;padding:0 3px;border-radius:3px;overflow-wrap:anywhere}
        .sev-error{color:#c62828;font-weight:600} .sev-warning{color:#bc4c00;font-weight:600}
        .fault{color:#6a1b9a} .count{background:#24292f;color:#fff;border-radius:9px;padding:0 7px;font-size:12px;font-weight:600}
        .clock{color:#57606a;font-size:13px}
        .legend{margin:6px 0;font-size:14px} .legend span{display:inline-block;margin-right:12px}
        .sw{display:inline-block;width:12px;height:12px;vertical-align:-1px;margin-right:4px;border-radius:2px}
        .tri{display:inline-block;width:0;height:0;border-left:6px solid transparent;border-right:6px solid transparent;border-bottom:11px solid #8e24aa;vertical-align:0;margin-right:4px}
        .dot{display:inline-block;width:12px;height:12px;border-radius:6px;vertical-align:-1px;margin-right:4px}
        nav#controls{position:sticky;top:0;z-index:2;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:6px 12px;font-size:14px}
        nav .group{display:inline-block;margin:2px 14px 2px 0} nav label{margin-right:8px;white-space:nowrap}
        nav button{font:inherit;margin-right:4px} .hint{color:#57606a;font-size:12px}
        .lanebox{overflow-x:auto;margin:6px 0} svg.lane{display:block;background:#fff;touch-action:pan-y;cursor:grab}
        svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        text.row{fill:#455a64;font-weight:600} .tick line,line.tick{stroke:#eaeef2} text.tick{fill:#6e7781;font-size:11px}
        .st text{fill:#fff;font-weight:600} .cb rect.opening{fill:#bbdefb} .cb rect.open{fill:#1e88e5}
        text.cn{fill:#fff;font-size:11px} line.ce{stroke:#263238;stroke-width:2} text.ce{fill:#263238;font-weight:600;font-size:11px}
        .mk.fault text{font-weight:600} .mk.finding text{fill:#fff;font-weight:700;font-size:11px}
        line.drop{stroke-dasharray:3 2;opacity:.6}
        ol.findings,ol.faults,ul.open{margin:4px 0 0;padding-left:26px} ol li,ul.open li{margin:3px 0}
        li:target,section:target{background:#fff8c5}
        .when{color:#57606a;font-size:13px} .evidence{color:#6e7781;font-size:13px;margin-left:8px}
        .cols{display:flex;flex-wrap:wrap;gap:0 40px} .cols>div{min-width:0;max-width:100%}
        #client-table{width:100%} #client-table td,#client-table th{white-space:nowrap} th.overview,td.overview{width:45%;min-width:140px;padding-right:0} svg.mini{display:block;width:100%;height:12px;margin-top:5px}
        .hidden{display:none} .nw{white-space:nowrap} #faults td:first-child,#rules td:first-child{white-space:nowrap}
        @media (max-width:800px){body{padding:8px;font-size:14px} section{padding:8px 10px} h1{font-size:19px} .hint{display:none}}
        """

    static let script = """
        (function(){
        "use strict";
        var END=Math.max(+document.body.getAttribute("data-end")||0,1e6);
        var L=\(HTMLLane.left),R=\(HTMLLane.right),MIN=\(HTMLLane.minWidth),LEVELS=\(HTMLLane.levels),STEP=\(HTMLLane.levelStep);
        var STATE_Y=\(HTMLLane.stateY),NS="http://www.w3.org/2000/svg";
        var v0=0,v1=END;
        function niceStep(us){var s=Math.max(us/1e6,0.001),p=1;while(p*10<=s)p*=10;while(p>s)p/=10;
          var ms=[1,2,5,10];for(var i=0;i<ms.length;i++)if(p*ms[i]>=s)return p*ms[i];return p*10;}
        function num(v){return String(Math.round(v*1000)/1000);}
        function secs(us){return (us/1e6).toFixed(3)+" s";}
        function el(name,attrs,text){var e=document.createElementNS(NS,name);for(var k in attrs)e.setAttribute(k,attrs[k]);if(text!=null)e.textContent=text;return e;}
        function set(e,k,v){if(e)e.setAttribute(k,typeof v==="number"?v.toFixed(1):v);}
        function stateLabel(name,w){function fits(n){return w>n*7.5+8;}if(fits(name.length))return name;
          var n=Math.floor((w-8)/7.5)-1;if(n>=3)return name.slice(0,n)+"\\u2026";return fits(1)?name.slice(0,1):null;}
        function place(rows,a,b){var lv=-1;for(var i=0;i<rows.length;i++){if(rows[i]<=a){lv=i;break;}}
          if(lv<0)lv=rows.length-1;rows[lv]=Math.max(rows[lv],b);return lv;}
        function layout(){
          var lanes=document.querySelectorAll("svg.lane");
          for(var n=0;n<lanes.length;n++){
            var svg=lanes[n];
            if(svg.closest("section.hidden"))continue;
            var W=Math.max(360,svg.parentNode.clientWidth),H=+svg.getAttribute("height"),plot=W-L-R;
            svg.setAttribute("width",W);svg.setAttribute("viewBox","0 0 "+W+" "+H);
            var x=function(t){return L+(t-v0)/(v1-v0)*plot;};
            var clip=svg.querySelector("rect.plotclip");set(clip,"width",plot+16);
            var axis=svg.querySelector("g.axis");while(axis.firstChild)axis.removeChild(axis.firstChild);
            var step=niceStep((v1-v0)/(plot/110))*1e6,t=Math.ceil(v0/step)*step;
            for(;t<=v1;t+=step){var tx=x(t);
              axis.appendChild(el("line",{"class":"tick",x1:tx,y1:16,x2:tx,y2:H-4}));
              axis.appendChild(el("text",{"class":"tick",x:tx,y:12,"text-anchor":"middle"},num(t/1e6)+" s"));}
            svg.querySelectorAll("g.st").forEach(function(g){
              var a=x(+g.dataset.t0),b=x(+g.dataset.t1),w=Math.max(MIN,b-a),tx=g.querySelector("text");
              set(g.querySelector("rect"),"x",a);set(g.querySelector("rect"),"width",w);
              var label=stateLabel(tx.dataset.name||tx.textContent,Math.min(b,L+plot)-Math.max(a,L));
              set(tx,"x",Math.max(a,L)+4);if(label)tx.textContent=label;tx.setAttribute("visibility",label?"visible":"hidden");});
            var labelsEnd=-Infinity;
            svg.querySelectorAll("g.cb").forEach(function(g){
              var a=x(+g.dataset.t0),b=x(+g.dataset.t1),r=g.querySelector("rect.opening"),o=g.querySelector("rect.open");
              set(r,"x",a);set(r,"width",Math.max(MIN,b-a));
              if(o){var c=x(+o.dataset.t0);set(o,"x",c);set(o,"width",Math.max(MIN,b-c));}
              var cn=g.querySelector("text.cn");set(cn,"x",Math.max(a,L)+3);cn.setAttribute("visibility",Math.min(b,L+plot)-Math.max(a,L)>30?"visible":"hidden");
              var line=g.querySelector("line.ce");set(line,"x1",b);set(line,"x2",b);
              var ce=g.querySelector("text.ce");if(ce){var edge=b>L+plot-16,half=ce.textContent.length*3.5+2,from=edge?b-2*half:b-half;
                var shown=from>=labelsEnd&&b>=L-8&&b<=L+plot+8;if(shown)labelsEnd=from+2*half;
                set(ce,"x",b);ce.setAttribute("text-anchor",edge?"end":"middle");ce.setAttribute("visibility",shown?"visible":"hidden");}});
            ["fault","finding"].forEach(function(kind){
              var rows=[];for(var i=0;i<LEVELS;i++)rows.push(-Infinity);
              svg.querySelectorAll("g.mk."+kind).forEach(function(g){
                if(g.closest(".hidden")||g.classList.contains("hidden"))return;
                var mx=x(+g.dataset.t),w=+g.dataset.w||18,flip=kind==="fault"&&mx+w>W-2;
                var a=kind==="fault"?(flip?mx-w:mx-7):mx-w/2,b=kind==="fault"?(flip?mx+7:mx+w):mx+w/2;
                if(kind==="fault"){var ft=g.querySelector("text");set(ft,"x",flip?-9:9);ft.setAttribute("text-anchor",flip?"end":"start");}
                var lv=place(rows,a,b),y=+(kind==="fault"?svg.dataset.faultY:svg.dataset.findingY)+lv*STEP;
                g.setAttribute("transform","translate("+mx.toFixed(2)+","+y+")");
                g.setAttribute("data-x",mx.toFixed(2));g.setAttribute("data-level",lv);
                var drop=g.querySelector("line.drop");if(drop)set(drop,"y1",STATE_Y-y);});});
          }
          document.getElementById("view").textContent=num(v0/1e6)+" – "+num(v1/1e6)+" s";
          document.body.setAttribute("data-layout","done");
          document.body.setAttribute("data-view",Math.round(v0)+" "+Math.round(v1));
        }
        function zoom(f,c){var w=Math.min(END,Math.max(1000,(v1-v0)*f));if(c==null)c=(v0+v1)/2;
          var a=c-(c-v0)*(w/(v1-v0));a=Math.max(0,Math.min(a,END-w));v0=a;v1=a+w;layout();}
        function filters(){
          var sev={error:document.getElementById("sev-error").checked,warning:document.getElementById("sev-warning").checked};
          var rule=document.getElementById("rule").value,client=document.getElementById("client").value,only=document.getElementById("only-findings").checked;
          function shown(e){return sev[e.dataset.sev]&&(!rule||e.dataset.rule===rule);}
          document.querySelectorAll("li.finding,g.mk.finding").forEach(function(e){e.classList.toggle("hidden",!shown(e));});
          document.querySelectorAll("section.client").forEach(function(s){
            var any=s.querySelector("li.finding:not(.hidden)")!==null;
            s.classList.toggle("hidden",(client&&s.dataset.client!==client)||(only&&!any));});
          layout();
        }
        ["sev-error","sev-warning","rule","client","only-findings"].forEach(function(id){document.getElementById(id).addEventListener("change",filters);});
        document.getElementById("zoom-in").addEventListener("click",function(){zoom(0.5);});
        document.getElementById("zoom-out").addEventListener("click",function(){zoom(2);});
        document.getElementById("zoom-reset").addEventListener("click",function(){v0=0;v1=END;layout();});
        document.querySelectorAll("#rules tr[data-rule]").forEach(function(tr){tr.addEventListener("click",function(ev){
          if(ev.target.closest("a"))return;document.getElementById("rule").value=tr.dataset.rule;filters();});});
        document.querySelectorAll("svg.lane").forEach(function(svg){
          var drag=null;
          svg.addEventListener("pointerdown",function(e){if(e.target.closest("a"))return;drag={x:e.clientX,a:v0,b:v1};svg.setPointerCapture(e.pointerId);});
          svg.addEventListener("pointermove",function(e){if(!drag)return;var plot=svg.width.baseVal.value-L-R,dt=(e.clientX-drag.x)/plot*(drag.b-drag.a);
            var a=Math.max(0,Math.min(drag.a-dt,END-(drag.b-drag.a)));v0=a;v1=a+(drag.b-drag.a);layout();});
          svg.addEventListener("pointerup",function(){drag=null;});
          svg.addEventListener("wheel",function(e){if(!e.ctrlKey)return;e.preventDefault();
            var r=svg.getBoundingClientRect(),plot=r.width-L-R,c=v0+(e.clientX-r.left-L)/plot*(v1-v0);zoom(e.deltaY<0?0.8:1.25,c);},{passive:false});
        });
        window.addEventListener("resize",layout);
        layout();
        })();
        """
}
